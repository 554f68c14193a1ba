package main

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/adk/model"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/adk-contextguard/contextguard/core/coretest/o200k"
)

// scriptedModelName is the name of both offline models. The guard treats a
// summarizer with the agent's model name as the same model, with the same
// (small) window.
const scriptedModelName = "scripted-sre"

// sreModel is the offline stand-in for Gemini: it plays the assistant's side
// of the story. It decides what to do from the request alone, never from how
// many contents it holds, so it keeps working after the guard rewrote the
// request:
//
//   - if the last content holds function responses, the commands echoed on
//     their first line say which step of which turn just ran; it plays the
//     next step, or answers when the turn's steps are done;
//   - otherwise the last content is the user's message, or the guard's
//     summary message quoting it: the newest story message it contains names
//     the turn, and the turn's commands already mentioned in it (a summary
//     lists the commands run) say how far the turn got.
//
// It reports UsageMetadata.PromptTokenCount from an independent count (o200k
// over the whole request, o200k.Counter of contextguardtest/o200k), as a provider
// would.
type sreModel struct {
	counter contextguardtest.Counter

	mu    sync.Mutex
	calls int
}

func newSREModel(c contextguardtest.Counter) *sreModel { return &sreModel{counter: c} }

// Name returns the model name.
func (m *sreModel) Name() string { return scriptedModelName }

// Calls returns how many requests the model answered.
func (m *sreModel) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls
}

// GenerateContent answers one request of the agent.
func (m *sreModel) GenerateContent(ctx context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(nil, err)
			return
		}
		if req == nil {
			yield(nil, fmt.Errorf("scripted model: nil request"))
			return
		}
		m.mu.Lock()
		m.calls++
		m.mu.Unlock()
		out := respond(req)
		yield(response(m.counter, req, out), nil)
	}
}

// response wraps content with usage counted by c, as a provider reports it.
func response(c contextguardtest.Counter, req *model.LLMRequest, out *genai.Content) *model.LLMResponse {
	in := c.CountRequest(req)
	gen := contextguardtest.CountContents(c, []*genai.Content{out})
	return &model.LLMResponse{
		Content:      out,
		TurnComplete: true,
		FinishReason: genai.FinishReasonStop,
		UsageMetadata: &genai.GenerateContentResponseUsageMetadata{
			PromptTokenCount:     int32(min(in, 1<<31-1)),
			CandidatesTokenCount: int32(min(gen, 1<<31-1)),
			TotalTokenCount:      int32(min(in+gen, 1<<31-1)),
		},
	}
}

// respond decides the answer to req from its last content.
func respond(req *model.LLMRequest) *genai.Content {
	last := lastContent(req.Contents)
	if last == nil {
		return textContent("How can I help with the cluster?")
	}
	if cmds := echoedCommands(last); len(cmds) > 0 {
		t, s, ok := locateStep(cmds)
		if !ok {
			return textContent("Finding: the tool output does not match anything I ran; please tell me what to check next.")
		}
		return play(req, t, s+1)
	}
	text := contentText(last)
	t := currentTurn(text)
	if t < 0 {
		return textContent("I can investigate pods, logs and files of the cluster. What should I look at?")
	}
	return play(req, t, progress(t, text))
}

// play returns step s of turn t, or the turn's answer once its steps are done.
func play(req *model.LLMRequest, t, s int) *genai.Content {
	st := story[t]
	if s < len(st.Steps) {
		c := &genai.Content{Role: genai.RoleModel}
		if st.Steps[s].Say != "" {
			c.Parts = append(c.Parts, &genai.Part{Text: st.Steps[s].Say})
		}
		for _, call := range st.Steps[s].Calls {
			c.Parts = append(c.Parts, &genai.Part{FunctionCall: &genai.FunctionCall{Name: call.Tool, Args: argsMap(call.Args)}})
		}
		return c
	}
	if len(st.Steps) == 0 {
		return textContent(incidentReport(req))
	}
	var b strings.Builder
	for _, f := range st.Findings {
		b.WriteString("Finding: " + f + "\n")
	}
	b.WriteString("\n" + st.Answer)
	return textContent(b.String())
}

// incidentReport is the closing answer: every finding the model can still
// see in its request, whether verbatim or through a summary.
func incidentReport(req *model.LLMRequest) string {
	seen := contextguardtest.FlattenText(req.Contents)
	var b strings.Builder
	b.WriteString("Incident summary, INC-4127 (checkout 5xx in production)\n\nWhat we found:\n")
	n := 0
	for _, f := range allFindings() {
		if strings.Contains(seen, f) {
			b.WriteString("- " + f + "\n")
			n++
		}
	}
	if n == 0 {
		b.WriteString("- (no findings left in my context)\n")
	}
	b.WriteString("\nRoot cause: payment-svc v2.14.0 added an unbounded in-memory idempotency cache (PAY-2291); under production traffic it outgrew the 256Mi limit and the replicas were OOMKilled in a loop, so checkout's charges failed.\n")
	b.WriteString("\nFollow-ups: bound the cache (IDEMPOTENCY_CACHE_MAX_ENTRIES) and evict on write; raise limits.memory to 512Mi; add memory to the HPA metrics; give checkout's payment client exponential backoff with jitter; alert on OOMKilled restarts.\n")
	return b.String()
}

// argsMap turns typed arguments into the map a provider would send.
func argsMap(a commander) map[string]any {
	raw, err := json.Marshal(a)
	if err != nil {
		return map[string]any{}
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return map[string]any{}
	}
	return m
}

func textContent(s string) *genai.Content {
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: s}}}
}

func lastContent(cs []*genai.Content) *genai.Content {
	for i := len(cs) - 1; i >= 0; i-- {
		if cs[i] != nil && len(cs[i].Parts) > 0 {
			return cs[i]
		}
	}
	return nil
}

func contentText(c *genai.Content) string {
	var parts []string
	for _, p := range c.Parts {
		if p != nil && p.Text != "" && !p.Thought {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// echoedCommands returns the commands on the first line of the function
// responses of c ("$ kubectl ...").
func echoedCommands(c *genai.Content) []string {
	var out []string
	for _, p := range c.Parts {
		if p == nil || p.FunctionResponse == nil {
			continue
		}
		s, _ := p.FunctionResponse.Response["output"].(string)
		line, _, _ := strings.Cut(s, "\n")
		if cmd, ok := strings.CutPrefix(line, "$ "); ok {
			out = append(out, cmd)
		}
	}
	return out
}

// locateStep finds the story step that ran cmds.
func locateStep(cmds []string) (turn, step int, ok bool) {
	for t := range story {
		for s := range story[t].Steps {
			for _, want := range storyCommands(t, s) {
				for _, got := range cmds {
					if got == want {
						return t, s, true
					}
				}
			}
		}
	}
	return 0, 0, false
}

// currentTurn is the newest story turn whose user message text contains, or
// -1.
func currentTurn(text string) int {
	for t := len(story) - 1; t >= 0; t-- {
		if strings.Contains(text, story[t].User) {
			return t
		}
	}
	return -1
}

// progress is the first step of turn t not yet done according to text: the
// step after the last one whose commands text mentions.
func progress(t int, text string) int {
	for s := len(story[t].Steps) - 1; s >= 0; s-- {
		all := true
		for _, cmd := range storyCommands(t, s) {
			if !strings.Contains(text, cmd) {
				all = false
				break
			}
		}
		if all {
			return s + 1
		}
	}
	return 0
}

// summarizerModel is the offline summarizer: it answers the guard's summary
// prompt with a structured summary built from the facts in its input: the
// "Finding:" lines and the commands run (from the previous summary and the
// transcript, or the agent's own request in the cached form) and the user's
// current request. It stays within the length the guard asks for (the
// prompt's "under N words", askedBudget).
type summarizerModel struct {
	counter contextguardtest.Counter

	mu    sync.Mutex
	calls int
}

func newSummarizerModel(c contextguardtest.Counter) *summarizerModel {
	return &summarizerModel{counter: c}
}

// Name returns the model name: the agent's, so the guard gives it the
// agent's window.
func (m *summarizerModel) Name() string { return scriptedModelName }

// Calls returns how many summaries were asked for.
func (m *summarizerModel) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls
}

var (
	findingRE = regexp.MustCompile(`Finding: [^\n]+`)
	commandRE = regexp.MustCompile("\\$ (?:kubectl|cat) [^\n\"\\\\`]+")
	currentRE = regexp.MustCompile(`(?s)<current_user_request>\s*(.*?)\s*</current_user_request>`)
)

// GenerateContent writes one summary.
func (m *summarizerModel) GenerateContent(ctx context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(nil, err)
			return
		}
		if req == nil {
			yield(nil, fmt.Errorf("scripted summarizer: nil request"))
			return
		}
		m.mu.Lock()
		m.calls++
		m.mu.Unlock()
		in := contextguardtest.FlattenText(req.Contents)
		budget := askedBudget(in, req.Config)
		yield(response(m.counter, req, textContent(m.summarize(in, budget))), nil)
	}
}

// askedWordsRE finds the length the guard's summary prompt asks for, in
// the transcript form's system instruction or in the instruction the
// cached form appends to the agent's request.
var askedWordsRE = regexp.MustCompile(`under (\d+) words`)

// askedBudget is the summary's length in tokens: the prompt's "under N
// words" (four tokens per three words), else half the output limit, else
// 800.
func askedBudget(in string, config *genai.GenerateContentConfig) int {
	if config != nil && config.SystemInstruction != nil {
		in = contextguardtest.FlattenText([]*genai.Content{config.SystemInstruction}) + in
	}
	if m := askedWordsRE.FindAllStringSubmatch(in, -1); m != nil {
		if n, err := strconv.Atoi(m[len(m)-1][1]); err == nil && n > 0 {
			return n * 4 / 3
		}
	}
	if config != nil && config.MaxOutputTokens > 0 {
		return int(config.MaxOutputTokens) / 2
	}
	return 800
}

// summarize builds the summary, dropping the oldest findings and commands
// until it fits budget tokens.
func (m *summarizerModel) summarize(in string, budget int) string {
	findings := dedupe(findingRE.FindAllString(in, -1))
	cmds := dedupe(commandRE.FindAllString(in, -1))
	current := ""
	if mm := currentRE.FindStringSubmatch(in); mm != nil {
		current = mm[1]
	}
	if len(cmds) > 12 {
		cmds = cmds[len(cmds)-12:]
	}
	for {
		s := renderSummary(findings, cmds, current)
		if o200k.Count(s) <= budget || (len(findings) <= 1 && len(cmds) <= 1) {
			return s
		}
		if len(cmds) > 1 {
			cmds = cmds[1:]
		}
		if len(findings) > 1 {
			findings = findings[1:]
		}
	}
}

func renderSummary(findings, cmds []string, current string) string {
	var b strings.Builder
	b.WriteString("## Current State\nThe agent is investigating a production incident with the on-call SRE")
	if current != "" {
		fmt.Fprintf(&b, " and is working on the user's current request: %q", current)
	}
	b.WriteString(".\n")
	if len(cmds) > 0 {
		fmt.Fprintf(&b, "The last command run was `%s`.\n", cmds[len(cmds)-1])
	}
	b.WriteString("\n## Key Information\n")
	if len(findings) == 0 {
		b.WriteString("- Nothing established yet.\n")
	}
	for _, f := range findings {
		b.WriteString("- " + f + "\n")
	}
	b.WriteString("\n## Context & Decisions\nCommands already run (their output is summarized above; do not run them again):\n")
	for _, c := range cmds {
		b.WriteString("- `" + c + "`\n")
	}
	b.WriteString("\n## Exact Next Steps\n1. Continue the user's current request from the first step not listed above.\n2. State each conclusion as a \"Finding:\" line, then answer the user.\n")
	return b.String()
}

// dedupe keeps the last occurrence of each string, in order.
func dedupe(xs []string) []string {
	last := map[string]int{}
	for i, x := range xs {
		last[strings.TrimSpace(x)] = i
	}
	var out []string
	for i, x := range xs {
		if last[strings.TrimSpace(x)] == i {
			out = append(out, strings.TrimSpace(x))
		}
	}
	return out
}
