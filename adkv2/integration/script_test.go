package integration

import (
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/functiontool"
	"google.golang.org/genai"
)

// The scenario every test plays. Turn N starts with a user message carrying
// the unique marker MARK-tNNN-xxxxxxxx. The agent then calls the tool
// fetch_records stepsPerTurn times (each result is a sizeable log excerpt
// tagged STEP-tNNN-sSS) and closes the turn with a short text. The script is
// stateless: it derives the turn and step from the request alone (the
// newest user text, the STEP tags of tool results and the DONE tags the
// summarizer keeps), so a restarted process, another replica or a compacted
// request all continue where the conversation stands.

const (
	agentName      = "assistant"
	toolName       = "fetch_records"
	agentModelName = "gemini-2.5-flash"
	// summarizerModelName names the summarizer; a name the guard's registry
	// knows, so no unknown-model warning is logged.
	summarizerModelName = "gemini-2.5-flash-lite"
	agentInstruction    = "You are an operations assistant. Use fetch_records to read the records the user asks about, then report briefly."
)

var (
	markerRe     = regexp.MustCompile(`MARK-t(\d{3})-[0-9a-f]{8}`)
	summarizedRe = regexp.MustCompile(`SUMMARIZED-t(\d{3})-[0-9a-f]{8}`)
	stepRe       = regexp.MustCompile(`(?:STEP|DONE)-t(\d{3})-s(\d{2})`)
)

// marker returns the unique marker of a turn in a conversation named salt.
func marker(salt string, turn int) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%d", salt, turn)
	return fmt.Sprintf("MARK-t%03d-%08x", turn, h.Sum32())
}

// userMessage is the user's message of a turn.
func userMessage(salt string, turn int) *genai.Content {
	text := fmt.Sprintf("%s: please fetch the records of batch %d and tell me which services are failing.", marker(salt, turn), turn)
	return genai.NewContentFromText(text, genai.RoleUser)
}

// summarizedTag is how the summarizer keeps a user marker in a summary: the
// marker's identity without its MARK- form, so a request that carries a
// summary provably does not carry the summarized messages themselves.
func summarizedTag(m string) string { return "SUMMARIZED-" + strings.TrimPrefix(m, "MARK-") }

// markerOfTag is the inverse of summarizedTag.
func markerOfTag(tag string) string { return "MARK-" + strings.TrimPrefix(tag, "SUMMARIZED-") }

// turnOf returns the turn number in a marker or tag.
func turnOf(m string) int {
	sub := markerRe.FindStringSubmatch(m)
	if sub == nil {
		sub = summarizedRe.FindStringSubmatch(m)
	}
	if sub == nil {
		return 0
	}
	n, _ := strconv.Atoi(sub[1])
	return n
}

// contentText joins the text parts of c.
func contentText(c *genai.Content) string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range c.Parts {
		if p != nil && p.Text != "" {
			b.WriteString(p.Text)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// requestText is every text and tool payload of the contents, for searching.
func requestText(contents []*genai.Content) string {
	var b strings.Builder
	for _, c := range contents {
		if c == nil {
			continue
		}
		for _, p := range c.Parts {
			if p == nil {
				continue
			}
			b.WriteString(p.Text)
			if p.FunctionResponse != nil {
				b.WriteString(compactJSON(p.FunctionResponse.Response))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// position returns the turn and step the conversation is at: the turn of
// the newest user text and the step after the last one done in it.
func position(contents []*genai.Content) (turn, step int, err error) {
	for i := len(contents) - 1; i >= 0 && turn == 0; i-- {
		c := contents[i]
		if c == nil || c.Role != genai.RoleUser {
			continue
		}
		for _, m := range markerRe.FindAllString(contentText(c), -1) {
			turn = max(turn, turnOf(m))
		}
	}
	if turn == 0 {
		return 0, 0, fmt.Errorf("script: no user marker in the %d contents of the request", len(contents))
	}
	for _, sub := range stepRe.FindAllStringSubmatch(requestText(contents), -1) {
		t, _ := strconv.Atoi(sub[1])
		s, _ := strconv.Atoi(sub[2])
		if t == turn {
			step = max(step, s+1)
		}
	}
	return turn, step, nil
}

// nextReply is what the scripted agent answers to contents: the next tool
// call of the turn, or the turn's closing text.
func nextReply(contents []*genai.Content, stepsPerTurn int) (*genai.Content, error) {
	turn, step, err := position(contents)
	if err != nil {
		return nil, err
	}
	if step < stepsPerTurn {
		return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
			{Text: fmt.Sprintf("Reading part %d of batch %d.", step+1, turn)},
			{FunctionCall: &genai.FunctionCall{Name: toolName, Args: map[string]any{
				"query": fmt.Sprintf("t%03d-s%02d", turn, step),
			}}},
		}}, nil
	}
	return genai.NewContentFromText(fmt.Sprintf("Batch %d reviewed after %d reads: two services show elevated error rates, the rest are healthy.", turn, stepsPerTurn), genai.RoleModel), nil
}

// fetchArgs are fetch_records' arguments.
type fetchArgs struct {
	// Query names the batch part, e.g. "t007-s01".
	Query string `json:"query"`
}

// fetchResult is fetch_records' result.
type fetchResult struct {
	Output string `json:"output"`
}

// newFetchTool returns the real ADK function tool the agent calls; each
// result is about outputBytes of log lines, tagged with its step.
func newFetchTool(outputBytes int) (tool.Tool, error) {
	t, err := functiontool.New(functiontool.Config{
		Name:        toolName,
		Description: "Returns the log records of one part of a batch, e.g. query \"t007-s01\".",
	}, func(_ agent.Context, a fetchArgs) (fetchResult, error) {
		return fetchResult{Output: toolOutput(a.Query, outputBytes)}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("fetch tool: %w", err)
	}
	return t, nil
}

var (
	services = []string{"checkout", "payments", "inventory", "search", "auth", "shipping", "ledger", "notifier"}
	levels   = []string{"INFO", "INFO", "INFO", "WARN", "ERROR"}
	paths    = []string{"/api/v1/orders", "/api/v1/items", "/healthz", "/api/v2/carts", "/internal/sync"}
)

// toolOutput is a deterministic log excerpt of about size bytes.
func toolOutput(query string, size int) string {
	h := fnv.New64a()
	h.Write([]byte(query))
	x := h.Sum64() | 1
	next := func(n int) int { // xorshift
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return int(x % uint64(n))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "STEP-%s records\n", query)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "2025-06-%02dT%02d:%02d:%02d.%03dZ %s %s-%d req=%06x %s status=%d latency=%dms\n",
			1+next(28), next(24), next(60), next(60), next(1000),
			levels[next(len(levels))], services[next(len(services))], next(9),
			next(1<<24), paths[next(len(paths))], []int{200, 200, 201, 404, 500, 503}[next(6)], 1+next(2000))
	}
	return b.String()
}

// summaryOf is the scripted summarizer: it keeps, in a short structured
// summary, every user marker it sees (as SUMMARIZED tags), the tags kept by
// the previous summary, and the tool steps done in the current turn (as DONE
// tags), which is what the script needs to continue. The current user
// request, which the guard quotes in the summary message itself, is not
// part of what is summarized unless it is in the conversation.
func summaryOf(input string) string {
	// What the guard marks as the user's current request is context, not
	// conversation to summarize.
	summarized := input
	if i := strings.Index(summarized, "<current_user_request>"); i >= 0 {
		if j := strings.Index(summarized[i:], "</current_user_request>"); j >= 0 {
			summarized = summarized[:i] + summarized[i+j:]
		}
	}
	current := 0
	for _, m := range markerRe.FindAllString(input, -1) {
		current = max(current, turnOf(m))
	}
	var tags []string
	seen := map[string]bool{}
	add := func(tag string) {
		if !seen[tag] {
			seen[tag] = true
			tags = append(tags, tag)
		}
	}
	for _, tag := range summarizedRe.FindAllString(summarized, -1) {
		add(tag)
	}
	for _, m := range markerRe.FindAllString(summarized, -1) {
		add(summarizedTag(m))
	}
	var done []string
	for _, sub := range stepRe.FindAllStringSubmatch(summarized, -1) {
		t, _ := strconv.Atoi(sub[1])
		if t == current {
			tag := fmt.Sprintf("DONE-t%s-s%s", sub[1], sub[2])
			if !slices.Contains(done, tag) {
				done = append(done, tag)
			}
		}
	}
	var b strings.Builder
	b.WriteString("## Current State\nThe user reviews log batches one by one; each batch is read with fetch_records and then reported.\n")
	b.WriteString("\n## Key Information\nRequests handled: ")
	b.WriteString(strings.Join(tags, " "))
	b.WriteString("\n\n## Exact Next Steps\nContinue the current batch. Steps done: ")
	b.WriteString(strings.Join(done, " "))
	b.WriteString("\n")
	return b.String()
}

// spanMarkers returns the user markers in the part of a summarizer input
// that is new conversation (between <conversation> and </conversation>),
// and whether such a part was found.
func spanMarkers(input string) ([]string, bool) {
	i := strings.Index(input, "<conversation>")
	j := strings.LastIndex(input, "</conversation>")
	if i < 0 || j < i {
		return nil, false
	}
	return uniq(markerRe.FindAllString(input[i:j], -1)), true
}

func uniq(xs []string) []string {
	var out []string
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
