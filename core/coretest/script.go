package coretest

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"

	"google.golang.org/genai"
)

// The scripted provider: it plays a scenario's turns, answers with tool calls
// and texts, records every request and rejects the ones over its window
// with a provider's overflow error.

const (
	// ErrorGemini returns a genai.APIError (HTTP 400, INVALID_ARGUMENT):
	// "The input token count (N) exceeds the maximum number of tokens allowed (M)."
	ErrorGemini ErrorStyle = iota
	// ErrorAnthropic returns Anthropic's "prompt is too long: N tokens > M maximum".
	ErrorAnthropic
	// ErrorOpenAI returns OpenAI's context_length_exceeded error.
	ErrorOpenAI
	// ErrorGeneric returns an error that names the context window but
	// states neither the request's size nor the limit, as some gateways
	// and OpenAI-compatible servers do.
	ErrorGeneric
)

// ScriptConfig configures a [Script].
type ScriptConfig struct {
	// Name is the model name (default "scripted-model").
	Name string
	// Window is the context window in ground-truth tokens; a request above it
	// is rejected with an [*OverflowError]. 0 means unlimited.
	Window int
	// Counter is the ground truth (default SeedCounter(1)).
	Counter Counter
	// Plan returns the plan of a user turn (0-based). Nil plans answer every
	// turn with a short text.
	Plan func(turn int) TurnPlan
	// NoUsage disables UsageMetadata in responses.
	NoUsage bool
	// UsageFromTurn reports usage only from this turn on (0: from the start).
	UsageFromTurn int
	// ErrorStyle selects the overflow error's provider shape.
	ErrorStyle ErrorStyle
	// ProviderCallIDs gives function calls provider-style IDs ("call_..."),
	// which ADK keeps in later requests; by default calls have no ID, like
	// Gemini, and ADK's client IDs are stripped from contents.
	ProviderCallIDs bool
	// StreamChunks is the number of partial chunks yielded before the final
	// response when streaming a text answer (default 3).
	StreamChunks int
	// Seed makes tool arguments and texts deterministic.
	Seed int64
	// ReportUsage, if set, is the PromptTokenCount reported for the request
	// at index (its position in the model's log) whose ground truth is
	// tokens, in place of tokens: a provider or adapter whose counts are
	// wrong (zero, negative, cumulative, far too high or low). Results
	// outside int32 saturate.
	ReportUsage func(index, tokens int) int
	// CutAtOutputLimit, if set and true for a request's record (its
	// Index, SessionID, Turn, Step and Tokens are filled), makes the
	// response stop at the output-token limit: it carries the planned
	// content (a step's function calls, as if their arguments were cut
	// short) with FinishReason MAX_TOKENS, and reports the request's
	// MaxOutputTokens, when set, as its output tokens. It is called with
	// the model's lock held and must not call the model.
	CutAtOutputLimit func(rec RequestRecord) bool
}

// RequestRecord describes one request a [Script] received. The
// driver (a [Meter]) fills the Raw*, Effective*, Summarizer* and compaction
// fields; the model fills the rest.
type RequestRecord struct {
	Index     int    // position in the model's log (all sessions)
	SessionID string // session, when the context carries one
	Turn      int    // user turn the model attributed the request to
	Step      int    // step within the turn (0 = answering the user message)

	Tokens        int      // ground-truth tokens of the request as received
	Contents      int      // number of contents
	Markers       []string // distinct markers in the request, in order of first appearance
	LastUserText  string   // start of the last user text part (at most 200 bytes)
	PairError     error    // result of [CheckPairs] on the contents
	Rejected      bool     // the model returned an overflow error
	UsageReported int      // PromptTokenCount reported (0 if none)
	Streamed      bool     // the request asked for streaming
	CutOff        bool     // the response stopped at the output limit (see ScriptConfig.CutAtOutputLimit)
	// Summary identifies the guard's summary message the request starts
	// with (a hash of its text), 0 for none: a step whose summary differs
	// from the previous step's compacted.
	Summary uint64

	// Filled by the driver.
	RawTokens       int // ground truth of the request ADK built, before any plugin
	RawContents     int // number of contents ADK built
	EffectiveInput  int // see [Result]
	SummarizerCalls int // summarizer calls between the raw request and the model call
	// CallsSoFar is how many summarizer calls the run made up to this
	// request, those made in the background while tools ran included.
	CallsSoFar    int
	Compaction    bool // a new summary, or a summarizer call and fewer contents (see [Result])
	NonShrinking  bool // compaction whose output was not smaller than its input
	LatestUser    string
	HasLatestUser bool // the request carries the marker of the user's latest message
	// RawMarkers are the markers of the raw request, and LostMarkers those
	// of them neither sent nor summarized so far (see [Result.LostMarkers]).
	RawMarkers, LostMarkers []string
}

// HasMarker reports whether the request contained marker.
func (r *RequestRecord) HasMarker(marker string) bool {
	return slices.Contains(r.Markers, marker)
}

type sessionState struct {
	turn, next int
}

// Script is the ADK-free core of a scripted provider: each ADK line's
// ScriptedModel is a model.LLM that hands its requests to a Script and turns
// the [Reply] into its own response type. For each user turn it follows the
// turn's [TurnPlan]: one reply per [ToolStep] (all the step's calls in one
// reply, as parallel calls), then a final text.
//
// It finds its position from the request itself, so a guard may rewrite or
// compact the request freely: if the request ends with function responses,
// the tag the fake tools echo ("t<turn>.s<step>.c<i>") says which step comes
// next; otherwise the highest [TurnTag] among user texts says which turn the
// request answers, and a per-session memory of the last step played resumes a
// turn whose tool results were summarized away. Requests are never counted
// to find a position. A trailing user text without a turn tag (ADK v2's
// synthetic "Continue processing…" message) neither moves the position nor
// counts as the user's latest request.
//
// It reports a prompt-token count from its ground-truth [Counter], rejects
// requests above its window with an [*OverflowError], and records every
// request ([Script.Requests]). It is safe for concurrent use across sessions.
type Script struct {
	cfg ScriptConfig

	mu       sync.Mutex
	states   map[string]*sessionState
	requests []RequestRecord
	rejected int
}

// NewScript returns a script playing cfg.
func NewScript(cfg ScriptConfig) *Script {
	if cfg.Name == "" {
		cfg.Name = "scripted-model"
	}
	if cfg.Counter == nil {
		cfg.Counter = SeedCounter(1)
	}
	if cfg.StreamChunks <= 0 {
		cfg.StreamChunks = 3
	}
	return &Script{cfg: cfg, states: map[string]*sessionState{}}
}

// Name returns the configured model name.
func (m *Script) Name() string { return m.cfg.Name }

// Config returns the configuration in effect (defaults filled in).
func (m *Script) Config() ScriptConfig { return m.cfg }

// Requests returns a copy of the records of every request received so far.
func (m *Script) Requests() []RequestRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.requests)
}

// Rejected returns how many requests were rejected as too long.
func (m *Script) Rejected() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rejected
}

func (m *Script) plan(turn int) TurnPlan {
	if m.cfg.Plan == nil {
		return TurnPlan{}
	}
	return m.cfg.Plan(turn)
}

// position decides which turn and step a request asks for.
func position(contents []*genai.Content, st *sessionState) (turn, step int) {
	var last *genai.Content
	for i := len(contents) - 1; i >= 0; i-- {
		if contents[i] != nil {
			last = contents[i]
			break
		}
	}
	if last != nil {
		for _, p := range last.Parts {
			if p == nil || p.FunctionResponse == nil {
				continue
			}
			if t, s, ok := parseTag(p.FunctionResponse.Response); ok {
				return t, s + 1
			}
		}
	}
	userTurn := -1
	for _, c := range contents {
		if c == nil || c.Role != genai.RoleUser {
			continue
		}
		for _, p := range c.Parts {
			if p == nil || p.Text == "" {
				continue
			}
			for _, mm := range turnTagPattern.FindAllStringSubmatch(p.Text, -1) {
				if n, err := strconv.Atoi(mm[1]); err == nil && n > userTurn {
					userTurn = n
				}
			}
		}
	}
	switch {
	case st != nil && userTurn <= st.turn:
		return st.turn, st.next
	case userTurn >= 0:
		return userTurn, 0
	default:
		return 0, 0
	}
}

func parseTag(resp map[string]any) (turn, step int, ok bool) {
	tag, _ := resp["tag"].(string)
	if tag == "" {
		return 0, 0, false
	}
	var c int
	if _, err := fmt.Sscanf(tag, "t%d.s%d.c%d", &turn, &step, &c); err != nil {
		return 0, 0, false
	}
	return turn, step, true
}

// callTag is the tag of call i of step s of turn t.
func callTag(turn, step, i int) string { return fmt.Sprintf("t%d.s%d.c%d", turn, step, i) }

// Reply is the response a [Script] makes to one request, for the ADK glue to
// turn into its own response type.
type Reply struct {
	// Content is the final response's content (role model): the step's
	// function calls, or the turn's final text.
	Content *genai.Content
	// FinishReason is STOP, or MAX_TOKENS for a response cut at the output
	// limit (see [ScriptConfig.CutAtOutputLimit]).
	FinishReason genai.FinishReason
	// Usage is the usage metadata to report; nil when none is reported.
	Usage *genai.GenerateContentResponseUsageMetadata
	// Chunks are the partial texts to stream before the final response
	// (only for a streamed text answer).
	Chunks []string
}

// Respond plays the request made of contents and config in session
// sessionID ("" when unknown): it records the request (observe, when not
// nil, sees the record before it is stored and may fill the driver's
// fields) and returns the reply, or an [*OverflowError] when the request is
// above the window. ctx is checked before anything is done.
func (m *Script) Respond(ctx context.Context, sessionID string, contents []*genai.Content, config *genai.GenerateContentConfig, stream bool, observe func(*RequestRecord)) (*Reply, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("scripted model: %w", err)
	}
	tokens := m.cfg.Counter.Count(contents, config)

	m.mu.Lock()
	var stCopy *sessionState
	if st := m.states[sessionID]; st != nil {
		c := *st
		stCopy = &c
	}
	m.mu.Unlock()
	turn, step := position(contents, stCopy)

	rec := RequestRecord{
		SessionID:    sessionID,
		Turn:         turn,
		Step:         step,
		Tokens:       tokens,
		Contents:     len(contents),
		Markers:      requestMarkers(contents),
		LastUserText: lastUserText(contents),
		PairError:    CheckPairs(contents),
		Streamed:     stream,
		Summary:      summaryID(contents),
	}
	rejected := m.cfg.Window > 0 && tokens > m.cfg.Window
	rec.Rejected = rejected
	report := !m.cfg.NoUsage && turn >= m.cfg.UsageFromTurn && !rejected
	if report {
		rec.UsageReported = tokens
	}

	m.mu.Lock()
	rec.Index = len(m.requests)
	rec.CutOff = !rejected && m.cfg.CutAtOutputLimit != nil && m.cfg.CutAtOutputLimit(rec)
	reported := tokens
	if report && m.cfg.ReportUsage != nil {
		reported = m.cfg.ReportUsage(rec.Index, tokens)
		rec.UsageReported = reported
	}
	if rejected {
		m.rejected++
	} else {
		m.states[sessionID] = &sessionState{turn: turn, next: step + 1}
	}
	m.mu.Unlock()
	if observe != nil {
		observe(&rec)
	}
	m.mu.Lock()
	m.requests = append(m.requests, rec)
	m.mu.Unlock()

	if rejected {
		return nil, &OverflowError{Style: m.cfg.ErrorStyle, Tokens: tokens, Limit: m.cfg.Window}
	}

	plan := m.plan(turn)
	reply := &Reply{Content: &genai.Content{Role: genai.RoleModel}, FinishReason: genai.FinishReasonStop}
	var text string
	if step < len(plan.Steps) {
		for i, call := range plan.Steps[step].Calls {
			reply.Content.Parts = append(reply.Content.Parts, &genai.Part{FunctionCall: m.functionCall(turn, step, i, call)})
		}
	} else {
		text = m.finalText(turn, plan)
		reply.Content.Parts = []*genai.Part{{Text: text}}
	}
	if rec.CutOff {
		reply.FinishReason = genai.FinishReasonMaxTokens
	}
	if report {
		out := CountContents(m.cfg.Counter, []*genai.Content{reply.Content})
		if rec.CutOff && config != nil && config.MaxOutputTokens > 0 {
			out = int(config.MaxOutputTokens)
		}
		reply.Usage = &genai.GenerateContentResponseUsageMetadata{
			PromptTokenCount:     int32(min(max(reported, math.MinInt32), math.MaxInt32)),
			CandidatesTokenCount: int32(min(out, math.MaxInt32)),
			TotalTokenCount:      int32(min(tokens+out, math.MaxInt32)),
		}
	}
	if stream && text != "" {
		n := m.cfg.StreamChunks
		for i := range n {
			reply.Chunks = append(reply.Chunks, text[len(text)*i/n:len(text)*(i+1)/n])
		}
	}
	return reply, nil
}

// functionCall builds call i of a step; its arguments tell the fake tool
// what to generate and the tag lets the model find its place later.
func (m *Script) functionCall(turn, step, i int, c ToolCall) *genai.FunctionCall {
	seed := mix(m.cfg.Seed, int64(turn), int64(step), int64(i), 0x746f6f6c)
	kind := c.Kind
	if kind == "" {
		kind = DefaultKind(c.Name)
	}
	fc := &genai.FunctionCall{
		Name: c.Name,
		Args: map[string]any{
			"size":   c.Size,
			"kind":   string(kind),
			"seed":   seed,
			"marker": Marker(seed),
			"tag":    callTag(turn, step, i),
		},
	}
	if c.Args != nil {
		fc.Args = maps.Clone(c.Args)
	}
	if m.cfg.ProviderCallIDs {
		fc.ID = fmt.Sprintf("call_%016x", uint64(mix(seed, 0x6964)))
	}
	return fc
}

func (m *Script) finalText(turn int, plan TurnPlan) string {
	size := plan.ResponseSize
	if size <= 0 {
		size = DefaultResponseSize
	}
	head := fmt.Sprintf("Turn %d done. ", turn)
	if size <= len(head) {
		return head
	}
	return head + Generate(KindProseEnglish, size-len(head), mix(m.cfg.Seed, int64(turn), 0x74657874))
}

// Request inspection helpers.
