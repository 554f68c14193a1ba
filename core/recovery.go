package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"

	"google.golang.org/genai"
)

// Reactive recovery (ARCHITECTURE.md, Recovery) and the in-memory record that survives a
// failed model call (ARCHITECTURE.md, Session state).
//
// State the guard writes in BeforeModelCallback rides on the model-response
// event; when the model call fails, ADK drops it. The guard therefore keeps,
// per session and agent, in the session table (bounded by sessions and
// bytes, session_memory_bound.go; entries in use are never evicted):
//
//   - the state written by the latest compaction, until the session state
//     shows it, so a summary already paid for is reused rather than paid
//     again;
//   - a provider overflow to act on: the next call compacts first,
//     calibrated with the provider's real count;
//   - for agents with a recovery model, the request last let through and the
//     contents ADK built for it, so a rejected request can be compacted again
//     from the original history.

// ContextOverflow describes a provider's rejection of a request as longer
// than the model's context window.
type ContextOverflow struct {
	// Provider is the shape the error matched: "gemini", "anthropic",
	// "openai" or "generic".
	Provider string
	// Tokens is the request's size as the provider counted it, 0 when the
	// error does not say.
	Tokens int
	// Limit is the model's limit as the provider stated it, 0 when the error
	// does not say.
	Limit int
}

// AsContextOverflow reports whether err is a provider's context-overflow
// error, and what it says about the request's size and the model's limit.
// It recognises Gemini ("The input token count (N) exceeds the maximum
// number of tokens allowed (M)", HTTP 400 INVALID_ARGUMENT, also as a
// genai.APIError), Anthropic ("prompt is too long: N tokens > M maximum",
// "input length and max_tokens exceed context limit"), OpenAI-compatible
// servers (context_length_exceeded, "maximum context length is M tokens ...
// resulted in N tokens") and generic messages ("context length", "context
// window", "too many tokens", "token limit", ...). Rate limits and quotas
// (HTTP 429, "tokens per minute"), output-length errors, cancellation and
// deadlines are not overflows.
func AsContextOverflow(err error) (ContextOverflow, bool) {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return ContextOverflow{}, false
	}
	msg := err.Error()
	var apiErr genai.APIError
	var apiPtr *genai.APIError
	switch {
	case errors.As(err, &apiErr):
	case errors.As(err, &apiPtr) && apiPtr != nil:
		apiErr = *apiPtr
	}
	if apiErr.Code == 429 || strings.EqualFold(apiErr.Status, "RESOURCE_EXHAUSTED") {
		return ContextOverflow{}, false
	}
	if apiErr.Message != "" && !strings.Contains(msg, apiErr.Message) {
		msg += " " + apiErr.Message
	}
	return parseOverflow(msg)
}

// overflowPattern is one provider message shape; tokens and limit are the
// indexes of the submatches holding the counts (0: not given).
type overflowPattern struct {
	provider      string
	re            *regexp.Regexp
	tokens, limit int
}

// num matches a count, possibly with thousands separators.
const num = `([0-9][0-9,]*)`

var overflowPatterns = []overflowPattern{
	{"gemini", regexp.MustCompile(`input token count\s*\(?` + num + `\)?\s*exceeds the maximum number of tokens allowed\s*\(?` + num), 1, 2},
	{"gemini", regexp.MustCompile(`exceeds the maximum number of tokens allowed`), 0, 0},
	{"anthropic", regexp.MustCompile(`prompt is too long:?\s*` + num + `\s*tokens?\s*>\s*` + num), 1, 2},
	{"anthropic", regexp.MustCompile("input length and `?max_tokens`? exceed context limit:?\\s*" + num + `\s*\+\s*` + num + `\s*>\s*` + num), 1, 3},
	{"anthropic", regexp.MustCompile(`prompt is too long`), 0, 0},
	// OpenAI and OpenAI-compatible servers (vLLM, xAI, Groq, ...). The
	// count of the messages alone wins over the total with the completion.
	{"openai", regexp.MustCompile(`\(` + num + ` in the messages`), 1, 0},
	{"openai", regexp.MustCompile(`(?:resulted in|you requested|request contains|prompt contains|request has|input has)\s*` + num + `\s*(?:input\s*)?tokens`), 1, 0},
	{"openai", regexp.MustCompile(`maximum (?:context|prompt) length is\s*` + num), 0, 1},
	{"openai", regexp.MustCompile(`input \(` + num + ` tokens?\) is longer than the model's context length \(` + num), 1, 2},
	{"openai", regexp.MustCompile(`context_length_exceeded|maximum context length`), 0, 0},
}

// genericOverflow are phrases that mark an overflow error of any provider.
var genericOverflow = []string{
	"context length", "context_length", "context window", "context size",
	"too many tokens", "token limit", "tokens limit", "maximum context",
	"input is too long", "prompt too long", "input too long",
	"maximum prompt length", "too long for the model",
}

// notOverflow are phrases of errors that mention tokens but that compaction
// cannot fix: rate limits, quotas and output lengths.
var notOverflow = []string{
	"rate limit", "rate_limit", "ratelimit", "quota", "tokens per min", "per minute",
	"resource_exhausted", "too many requests",
	"max_tokens is too large", "max_output_tokens", "maxoutputtokens", "completion tokens", "output token",
}

// parseOverflow classifies an error message (see AsContextOverflow).
func parseOverflow(msg string) (ContextOverflow, bool) {
	low := strings.ToLower(msg)
	var out ContextOverflow
	matched := false
	for _, p := range overflowPatterns {
		m := p.re.FindStringSubmatch(low)
		if m == nil {
			continue
		}
		if !matched {
			out.Provider = p.provider
			matched = true
		}
		if p.tokens > 0 && out.Tokens == 0 {
			out.Tokens = parseCount(m[p.tokens])
		}
		if p.limit > 0 && out.Limit == 0 {
			out.Limit = parseCount(m[p.limit])
		}
	}
	if !matched {
		for _, s := range genericOverflow {
			if strings.Contains(low, s) {
				out.Provider, matched = "generic", true
				break
			}
		}
		if !matched {
			return ContextOverflow{}, false
		}
	}
	// A specific input-size pattern wins over the exclusions (Anthropic's
	// "input length and max_tokens exceed context limit" names max_tokens).
	if out.Tokens == 0 {
		for _, s := range notOverflow {
			if strings.Contains(low, s) {
				return ContextOverflow{}, false
			}
		}
	}
	return out, true
}

// parseCount reads a count with optional thousands separators; an
// implausible value is 0 (unknown).
func parseCount(s string) int {
	s = strings.ReplaceAll(s, ",", "")
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > maxPlausibleTokenNum {
		return 0
	}
	return n
}

// ---------------------------------------------------------------------------
// The in-memory record
// ---------------------------------------------------------------------------

// agentMemory is what the guard keeps in memory for one agent of one
// session beside the session state. Guarded by the session entry's mutex.
type agentMemory struct {
	agent string
	// compactionsKey is the state key of the agent's compaction counter,
	// and requestKey of a requested compaction (compaction_request.go).
	compactionsKey string
	requestKey     string
	// compacted is the state the latest compaction wrote, kept until the
	// session state shows it.
	compacted *guardState
	// overflow is a provider overflow the next call acts on.
	overflow *pendingOverflow
	// sentReq is the request last let through (the adapter's, compared by
	// identity only: Request.Origin) and sentRaw the contents ADK built
	// for it, before the guard rewrote them (recovery model only).
	sentReq any
	sentRaw []*genai.Content
	// sentBytes is what sentRaw retains, about (retainedBytesPerToken).
	sentBytes int
	// trimWarned records that trimming to the current request was logged
	// (compaction_strategy_threshold.go), so it is said once per session.
	trimWarned bool
}

// pendingOverflow is a provider overflow recorded for the next call.
type pendingOverflow struct {
	real     int // the provider's count of the rejected request, 0 if unknown
	limit    int // the provider's limit, 0 if unknown
	estimate int // the guard's raw estimate of the rejected request
	// ratio is the provider ratio the session learns from the overflow
	// (learnFromOverflow), per mille; 0 if nothing was learned.
	ratio int
}

// memory returns the record of agent in the session, creating it.
func (e *sessionEntry) memory(agent string) *agentMemory {
	for _, m := range e.agents {
		if m.agent == agent {
			return m
		}
	}
	m := &agentMemory{agent: agent, compactionsKey: keyCompactions + agent, requestKey: keyCompactRequest + agent}
	e.agents = append(e.agents, m)
	return m
}

// quietLog discards the warnings of state reads the guard already logged.
var quietLog = slog.New(slog.DiscardHandler)

// rememberCompaction records the state a compaction of this call wrote, so
// that it survives a failed model call. before is the compaction counter the
// call started from.
func (m *agentMemory) rememberCompaction(st StateReader, before int) {
	v, err := st.Get(m.compactionsKey)
	if err != nil {
		return
	}
	if n, ok := decodeInt(v); !ok || n <= before {
		return
	}
	s := stateIO{agent: m.agent, log: quietLog}.loadAll(st)
	m.compacted = &s
}

// recall applies, at the start of a call, what the in-memory record knows
// and the session state does not: the summary of a compaction whose state
// delta was lost with a failed model call (persisted again), and a provider
// overflow, turned into the calibration signal that makes this call compact
// first. It returns the state the call starts from.
func (g *Guard) recall(call Call, cfg *Agent, m *agentMemory, st State, sio stateIO, req *Request, prev guardState) guardState {
	if cfg.recoveryLLM != nil {
		m.sentReq, m.sentRaw = req.Origin, req.Contents
		m.sentBytes = scaleSat(prev.lastEstimate, retainedBytesPerToken)
	}
	if c := m.compacted; c != nil {
		switch {
		case c.compactions <= prev.compactions:
			// The session state has it, or something newer.
			m.compacted = nil
		default:
			if w, _, _ := locateCut(req.Contents, *c, fingerprint, req.Coverage); w == 0 {
				m.compacted = nil
				break
			}
			g.log.Info("contextguard: the state of the last compaction was lost with a failed model call; reusing its summary",
				"agent", cfg.name, "session", call.SessionID(), "compactions", c.compactions, "watermark", c.watermark)
			if st != nil {
				sio.save(st, prev, *c)
			}
			prev = *c
		}
	}
	if ov := m.overflow; ov != nil {
		m.overflow = nil
		lim := g.requestLimits(cfg, req)
		if ov.ratio > 0 && ov.ratio != prev.providerRatio {
			// What the overflow taught survives the compaction it causes:
			// written here, since the failed call's state delta was lost.
			if st != nil {
				sio.set(st, keyProviderRatio, prev.providerRatio, ov.ratio)
			}
			prev.providerRatio = ov.ratio
		}
		real := ov.real
		if real <= 0 {
			// The provider did not say: the request was over its limit, and
			// at least as large as the ratio learned from it says.
			limit := lim.window
			if ov.limit > 0 && ov.limit < limit {
				limit = ov.limit
			}
			real = max(satAdd(limit, 1), scaleSat(ov.estimate, float64(ov.ratio)/ratioScale))
		}
		if ov.limit > 0 && ov.limit < lim.threshold {
			g.log.Warn("contextguard: the provider's limit is below the guard's threshold; set WithMaxTokens to the provider's limit",
				"agent", cfg.name, "session", call.SessionID(), "limit", ov.limit, "window", lim.window, "threshold", lim.threshold)
		}
		prev.realTokens = max(real, lim.threshold+1)
		switch {
		case ov.estimate > 0:
			prev.lastEstimate = ov.estimate
		case prev.lastEstimate <= 0:
			prev.lastEstimate = prev.realTokens
		}
		prev.floor = 0
		g.log.Info("contextguard: the provider rejected the previous request as too long; compacting first",
			"agent", cfg.name, "session", call.SessionID(), "real_tokens", ov.real, "limit", ov.limit, "estimated_tokens", ov.estimate,
			"provider_ratio", float64(prev.providerRatio)/ratioScale)
	}
	return prev
}

// ---------------------------------------------------------------------------
// OnModelErrorCallback
// ---------------------------------------------------------------------------

// Recovery is a compacted request for the agent's recovery model
// to answer in place of the rejected one (recoverOverflow), with the
// logger of the call.
type Recovery struct {
	req *Request
	log *slog.Logger
}

// recoverOverflow is the engine's part of OnModelErrorCallback
// (ARCHITECTURE.md, Recovery) for a context overflow ov of an agent the
// guard guards: st is the state the call reads and writes, ro the
// session's state without the call's writes. An overflow is compacted to
// half the window, and the compacted request returned for the agent's
// recovery model to answer, when one is configured; otherwise it is
// recorded so the session's next call compacts first, and the provider's
// error is returned once (nil, nil). An error is the callback's error.
func (g *Guard) recoverOverflow(c Call, st State, ro StateReader, cfg *Agent, req *Request, ov ContextOverflow, modelErr error) (*Recovery, error) {
	logger := g.log.With("agent", cfg.name, "session", c.SessionID())
	logger.Warn("contextguard: the provider rejected the request as too long",
		"provider", ov.Provider, "real_tokens", ov.Tokens, "limit", ov.Limit, "recovery_model", cfg.recoveryLLM != nil)
	if onlyCurrentRequest(c, req) {
		// Nothing before the user's current request could be cut: the
		// provider rejected the part no compaction can shrink (for example
		// an attachment it charges far above the estimate).
		logger.Error("contextguard: the provider rejected the user's current request itself; nothing the guard can cut will make it fit")
		return nil, fmt.Errorf("%w: the provider rejected the user's current request with nothing before it to compact", irreducibleError(max(ov.Tokens, ov.Limit+1), overflowWindow(ov, g.limits(cfg, req.Model).window)))
	}

	creq, ev, err := g.handleOverflow(c, st, ro, cfg, req, ov, logger)
	g.fireHook(c, ev)
	switch {
	case err != nil:
		logger.Error("contextguard: recovery impossible", "error", err)
		return nil, fmt.Errorf("contextguard: recovering from a context overflow: %w; the provider said: %w", err, modelErr)
	case cfg.recoveryLLM == nil || req == nil:
		logger.Info("contextguard: no recovery model; returning the provider's error, the session's next call compacts first")
		return nil, nil
	case creq == nil:
		logger.Warn("contextguard: nothing left to compact; returning the provider's error")
		return nil, nil
	}
	return &Recovery{req: creq, log: logger}, nil
}

// recoveryFailed handles the recovery model's error err: the compaction is
// remembered (mem.compacted) and reused by the next call; only a compacted
// request that is still too long makes that call compact again. It returns
// the callback's error, nil to return the provider's.
func (g *Guard) recoveryFailed(c Call, st State, cfg *Agent, rec *Recovery, err error) error {
	creq, logger := rec.req, rec.log
	if again, ok := AsContextOverflow(err); ok {
		g.rememberOverflow(c, st, cfg, creq, again, logger)
		if onlyCurrentRequest(c, creq) {
			logger.Error("contextguard: the recovery model rejected the summary and the user's current request alone; nothing the guard can cut will make it fit")
			return fmt.Errorf("%w: the summary and the user's current request alone were rejected by the recovery model", irreducibleError(max(again.Tokens, again.Limit+1), overflowWindow(again, g.limits(cfg, creq.Model).window)))
		}
	}
	logger.Error("contextguard: the recovery model failed; returning the provider's error",
		"error", err)
	return nil
}

// overflowWindow is the window an overflow was judged against: the
// provider's limit when it states one, else the guard's window.
func overflowWindow(ov ContextOverflow, window int) int {
	if ov.Limit > 0 {
		return ov.Limit
	}
	return window
}

// onlyCurrentRequest reports whether the rejected request is the user's
// current request alone: nothing before it, or only the guard's summary
// message carrying it (the recovery's own compaction, already cut to half
// the window); a compaction could not make it smaller.
func onlyCurrentRequest(c Call, req *Request) bool {
	if req == nil || len(req.Contents) == 0 {
		return false
	}
	_, i := currentRequest(c.UserContent(), req.Contents)
	switch {
	case i == 0:
		return true
	case i < 0:
		// The summary message quotes the request: it is the request.
		return len(req.Contents) == 1 && isSummaryMessage(req.Contents[0])
	}
	return false
}

// handleOverflow does the work of OnModelErrorCallback while it owns the
// session: without a recovery model it records the overflow for the next
// call; with one it compacts the rejected request and returns the request to
// send (nil when nothing could be compacted, and the overflow is then
// recorded). It returns the compaction made, if any, for the hook, which
// runs once the session is released.
func (g *Guard) handleOverflow(c Call, st State, ro StateReader, cfg *Agent, req *Request, ov ContextOverflow, logger *slog.Logger) (*Request, *CompactionEvent, error) {
	sess, err := g.sessions.acquire(c, sessionKey(c))
	if err != nil {
		return nil, nil, sessionError(c, cfg.name, err)
	}
	defer g.sessions.release(sess)
	mem := sess.memory(cfg.name)
	if cfg.recoveryLLM == nil || req == nil {
		g.recordOverflow(st, sess, cfg, mem, req, ov)
		return nil, nil, nil
	}
	learned := g.learnedRatio(st, cfg)
	creq, ev, err := g.compactForRecovery(c, st, ro, cfg, sess, mem, req, ov, logger)
	if err != nil || creq == nil {
		// The provider's error is returned, and the state this call wrote
		// is lost with it: learn from the original ratio again.
		g.recordOverflowFrom(sess, cfg, mem, req, ov, learned)
	}
	return creq, ev, err
}

// rememberOverflow records, for the session's next call, that the recovery
// model rejected the compacted request too.
func (g *Guard) rememberOverflow(c Call, st State, cfg *Agent, req *Request, ov ContextOverflow, logger *slog.Logger) {
	sess, err := g.sessions.acquire(c, sessionKey(c))
	if err != nil {
		logger.Warn("contextguard: the recovery model's overflow is not recorded", "error", sessionError(c, cfg.name, err))
		return
	}
	defer g.sessions.release(sess)
	g.recordOverflow(st, sess, cfg, sess.memory(cfg.name), req, ov)
}

// learnedRatio is the provider ratio the session has learned so far, per
// mille, as the call whose state is st sees it (0: none).
func (g *Guard) learnedRatio(st StateReader, cfg *Agent) int {
	if st == nil {
		return 0
	}
	return cfg.stateIO(quietLog).num(st, keyProviderRatio)
}

// recordOverflow records an overflow for the session's next call, with the
// provider ratio the session learns from it. The caller holds the session
// entry.
func (g *Guard) recordOverflow(st StateReader, sess *sessionEntry, cfg *Agent, mem *agentMemory, req *Request, ov ContextOverflow) {
	g.recordOverflowFrom(sess, cfg, mem, req, ov, g.learnedRatio(st, cfg))
}

// recordOverflowFrom is recordOverflow from the learned ratio given.
func (g *Guard) recordOverflowFrom(sess *sessionEntry, cfg *Agent, mem *agentMemory, req *Request, ov ContextOverflow, learned int) {
	p := &pendingOverflow{real: ov.Tokens, limit: ov.Limit}
	if req != nil {
		est := sess.estimator(cfg, req.Model)
		p.estimate = requestTokens(est, req)
		p.ratio = learnFromOverflow(learned, est.defaultFactor(), ov.Tokens, g.overflowLimit(cfg, req.Model, ov), p.estimate)
	}
	mem.overflow = p
}

// overflowLimit is the limit a rejected request was over: the provider's,
// when it states one below the guard's window, else the window.
func (g *Guard) overflowLimit(cfg *Agent, modelName string, ov ContextOverflow) int {
	w := g.window(cfg, modelName)
	if ov.Limit > 0 && ov.Limit < w {
		return ov.Limit
	}
	return w
}

// compactForRecovery compacts the rejected request to half the window
// (the provider's limit when it is smaller than the guard's), calibrated
// with the provider's real count, and persists the compaction in the call's
// state delta, which rides on the recovery response. It returns the request
// to send, nil when nothing could be compacted, and the compaction's event
// for the hook. The caller owns the session entry.
func (g *Guard) compactForRecovery(c Call, st State, ro StateReader, cfg *Agent, sess *sessionEntry, mem *agentMemory, req *Request, ov ContextOverflow, logger *slog.Logger) (*Request, *CompactionEvent, error) {
	sio := cfg.stateIO(g.log)
	var prev guardState
	if st != nil {
		prev = sio.load(st) // includes what this call's BeforeModelCallback wrote
	}
	raw := req.Contents
	if req.Origin != nil && mem.sentReq == req.Origin && mem.sentRaw != nil {
		raw = mem.sentRaw
	}
	mem.sentReq, mem.sentRaw = nil, nil

	est := sess.estimator(cfg, req.Model)
	sent := max(requestTokens(est, req), 1)
	creq := *req
	creq.Contents = raw

	lim := g.requestLimits(cfg, req)
	window := lim.window
	if ov.Limit > 0 && ov.Limit < window {
		window = ov.Limit
	}
	// The session learns the provider's ratio from the rejection; it rides
	// on the recovery response with the compaction.
	learned := prev
	learned.providerRatio = learnFromOverflow(prev.providerRatio, est.defaultFactor(), ov.Tokens, window, sent)
	real := ov.Tokens
	if real <= 0 {
		real = max(satAdd(window, 1), scaleSat(sent, float64(learned.providerRatio)/ratioScale))
	}
	t := &turn{ctx: c, ro: ro, cfg: cfg, req: creq, raw: raw, prev: learned, est: est, sess: sess, base: g.log, rejected: true}
	t.lim = limits{window: window, buffer: window - window/2, threshold: window / 2}
	if lo, ok := t.lim.withOutput(lim.output); ok {
		t.lim = lo
	}
	t.cal = newCalibration(guardState{realTokens: real, lastEstimate: sent}, est)
	t.inj = injectSummary(t)
	t.before = t.cal.count(requestTokens(est, &t.req))
	logger.Info("contextguard: compacting the rejected request to half the window",
		"real_tokens", real, "estimated_tokens", sent, "correction", t.cal.factor, "threshold", t.lim.threshold, "window", window)

	next, err := g.compactThreshold(t, "overflow")
	recordUsage(t, &next)
	if st != nil {
		sio.save(st, prev, next)
	}
	if next.compactions > prev.compactions {
		c := next
		mem.compacted = &c
	}
	if err != nil {
		return nil, t.event, err
	}
	if next.compactions == prev.compactions {
		return nil, t.event, nil
	}
	out := t.req
	return &out, t.event, nil
}

// ---------------------------------------------------------------------------
// Responses cut at the output limit
// ---------------------------------------------------------------------------

// cutCallNote replaces the function calls of a response cut at the output
// limit near the window: their arguments may be cut short, so they are not
// run.
const cutCallNote = "[contextguard: my response was cut at the output-token limit before it was complete, so the tool call it started was not run. The conversation will be compacted; ask me to continue.]"

// cutAtOutputLimit handles a final response that stopped at the output
// limit (finish reason MAX_TOKENS). When the request was near the window
// (outputNearWindow), the next call compacts first, and a function call in
// the response, whose arguments may be cut short, is not run: the content
// returned replaces the response's, keeping its text and replacing the
// call by a short model text saying so (cutCallNote). With room left, or
// when the response holds no function call, it returns nil and the
// response passes through untouched.
func (g *Guard) cutAtOutputLimit(c Call, cfg *Agent, st State, resp *Response) *genai.Content {
	sio := cfg.stateIO(g.log)
	prev := guardState{
		realTokens:    sio.num(st, keyRealTokens),
		lastEstimate:  sio.num(st, keyLastEstimate),
		providerRatio: sio.num(st, keyProviderRatio),
		window:        sio.num(st, keyWindow),
		compactNext:   sio.num(st, keyCompactNext),
	}
	prompt, output, threshold, near := outputNearWindow(cfg, prev, resp)
	if !near {
		return nil
	}
	sio.set(st, keyCompactNext, prev.compactNext, 1)
	var parts []*genai.Part
	calls := 0
	if resp.Content != nil {
		for _, p := range resp.Content.Parts {
			switch {
			case p == nil:
			case p.FunctionCall != nil:
				calls++
			default:
				parts = append(parts, p)
			}
		}
	}
	g.log.Warn("contextguard: the response stopped at the output limit near the window; the next call compacts first",
		"agent", cfg.name, "session", c.SessionID(), "real_tokens", prompt, "output_tokens", output,
		"threshold", threshold, "window", prev.window, "calls_dropped", calls)
	if calls == 0 {
		return nil
	}
	return &genai.Content{Role: genai.RoleModel, Parts: append(parts, &genai.Part{Text: cutCallNote})}
}

// outputNearWindow says whether a response that stopped at the output limit
// came from a request near the window, and with what numbers. Near the
// window means that the request's prompt plus the output it was cut at
// reaches the agent's trigger: the room left under the trigger was smaller
// than the output limit, so the output was likely cut for want of room, and
// the next request, which carries it, would be at or over the trigger
// anyway. The prompt is the provider's believed count of it (recordReport
// stored it), else the guard's estimate of it calibrated by the session's
// learned ratio, at least defaultCorrection. The output is the response's
// output-token count, else the trigger's buffer. Without the window the
// request was judged against, nothing is near.
func outputNearWindow(cfg *Agent, st guardState, resp *Response) (prompt, output, threshold int, near bool) {
	if st.window <= 0 {
		return 0, 0, 0, false
	}
	lim, _ := cfg.limitsFor(st.window)
	reported := 0
	if u := resp.UsageMetadata; u != nil {
		reported = int(u.PromptTokenCount)
		output = int(u.CandidatesTokenCount)
	}
	switch {
	case reported > 0 && reported == st.realTokens:
		prompt = reported
	default:
		prompt = scaleSat(st.lastEstimate, max(defaultCorrection, float64(st.providerRatio)/ratioScale))
	}
	if output <= 0 {
		output = lim.buffer
	}
	return prompt, output, lim.threshold, satAdd(prompt, output) >= lim.threshold
}
