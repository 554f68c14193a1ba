package contextguard

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/adk/model"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/internal/tokens"
)

// ---------------------------------------------------------------------------
// Token accounting (DESIGN §4)
// ---------------------------------------------------------------------------

// tokenEstimator counts the tokens of the pieces of a request. It is the seam
// the feature estimator replaces; implementations are safe for concurrent use.
type tokenEstimator interface {
	// content is the tokens of one message, framing included.
	content(c *genai.Content) int
	// text is the tokens of a plain string.
	text(s string) int
	// declaration is the tokens of one function declaration.
	declaration(d *genai.FunctionDeclaration) int
	// builtinTools is the tokens of the built-in tools set on t.
	builtinTools(t *genai.Tool) int
	// defaultFactor multiplies raw estimates when the provider has not yet
	// reported a real count; it is sized to the estimator's p90 error.
	defaultFactor() float64
}

// requestTokens is the estimate of everything a request sends: contents,
// system instruction and tool declarations.
func requestTokens(e tokenEstimator, req *model.LLMRequest) int {
	if req == nil {
		return 0
	}
	n := contentsTokens(e, req.Contents)
	if req.Config != nil {
		n = satAdd(n, e.content(req.Config.SystemInstruction))
		n = satAdd(n, toolsTokens(e, req.Config.Tools))
	}
	return n
}

// toolsTokens is the estimate of the tool declarations sent with every call.
func toolsTokens(e tokenEstimator, ts []*genai.Tool) int {
	n := 0
	for _, t := range ts {
		if t == nil {
			continue
		}
		n = satAdd(n, e.builtinTools(t))
		for _, d := range t.FunctionDeclarations {
			n = satAdd(n, e.declaration(d))
		}
	}
	return n
}

func contentsTokens(e tokenEstimator, cs []*genai.Content) int {
	n := 0
	for _, c := range cs {
		n = satAdd(n, e.content(c))
	}
	return n
}

// featureEstimator is the single-pass feature estimator of internal/tokens
// for one tokenizer family (o200k for GPT and o-series, Gemma-3 for Gemini,
// o200k times a factor for Claude; o200k for unknown models).
type featureEstimator struct{ e *tokens.Estimator }

func (f featureEstimator) content(c *genai.Content) int { return f.e.Content(c) }
func (f featureEstimator) text(s string) int            { return f.e.Text(s) }
func (f featureEstimator) declaration(d *genai.FunctionDeclaration) int {
	return f.e.Declaration(d)
}
func (f featureEstimator) builtinTools(t *genai.Tool) int { return f.e.BuiltinTools(t) }
func (f featureEstimator) defaultFactor() float64         { return defaultCorrection }

// estimatorFor returns the token estimator for a model name.
func estimatorFor(model string) tokenEstimator {
	return featureEstimator{e: tokens.ForModel(model)}
}

// estimatorSalt separates the cached counts of different estimators that
// share a session's cache.
func estimatorSalt(model string) uint64 {
	return mix(uint64(tokens.FamilyForModel(model)) + 1)
}

// ---------------------------------------------------------------------------
// Summary injection and the watermark (DESIGN §6)
// ---------------------------------------------------------------------------

// syntheticContinuations are texts adapters append after the guard has run
// (ADK's Gemini adapter does so when the last message is not the user's). A
// request that already carries one, because it is being retried, must not
// move the watermark.
var syntheticContinuations = []string{
	"Continue processing previous requests as instructed. Exit or provide a summary if no more outputs are needed.",
	"Handle the requests as specified in the System Instruction.",
}

func isSynthetic(c *genai.Content) bool {
	if c == nil || c.Role != genai.RoleUser || len(c.Parts) != 1 || c.Parts[0] == nil {
		return false
	}
	for _, s := range syntheticContinuations {
		if c.Parts[0].Text == s {
			return true
		}
	}
	return false
}

// coverableLen is how many leading contents a summary made now would cover:
// all of them but a trailing synthetic continuation.
func coverableLen(cs []*genai.Content) int {
	n := len(cs)
	for n > 0 && isSynthetic(cs[n-1]) {
		n--
	}
	return n
}

// injection is the outcome of placing the stored summary into a request.
type injection struct {
	// cut is how many leading raw contents the summary replaced (0: none).
	cut int
	// injected reports whether the summary message was prepended.
	injected bool
	// reason says why no cut was made although a summary exists.
	reason string
}

// locateWatermark finds where the stored summary ends in raw: at the stored
// watermark when the fingerprint matches there, else at the matching content
// nearest to it. Without a match nothing is cut (never blindly). State from
// the earlier guard has no fingerprint; its watermark is trusted when it lies
// within the contents.
func locateWatermark(raw []*genai.Content, st guardState, fingerprint func(*genai.Content) string) (int, string) {
	w := st.watermark
	if w <= 0 {
		return 0, "summary without watermark"
	}
	if st.fingerprint == "" {
		if w > len(raw) {
			return 0, "watermark beyond the contents"
		}
		return w, ""
	}
	if w <= len(raw) && fingerprint(raw[w-1]) == st.fingerprint {
		return w, ""
	}
	best := -1
	for i := range raw {
		if fingerprint(raw[i]) != st.fingerprint {
			continue
		}
		if best < 0 || abs(i+1-w) < abs(best-w) {
			best = i + 1
		}
	}
	if best < 0 {
		if w > len(raw) {
			return 0, "watermark beyond the contents and fingerprint not found"
		}
		return 0, "fingerprint mismatch"
	}
	return best, ""
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// pairSafeStart moves a cut at index start back until no function response in
// cs[start:] answers a call that lies before start, so a request never holds a
// response whose call is gone. Calls are matched by ID when both have one,
// else by name.
func pairSafeStart(cs []*genai.Content, start int) int {
	for start > 0 && start < len(cs) {
		moved := false
		for i := start; i < len(cs) && !moved; i++ {
			for _, p := range partsOf(cs[i]) {
				if p == nil {
					continue
				}
				fr := p.FunctionResponse
				if fr == nil || callIndex(cs[start:i], fr) >= 0 {
					continue
				}
				if j := callIndex(cs[:start], fr); j >= 0 {
					start = j
					moved = true
					break
				}
			}
		}
		if !moved {
			return start
		}
	}
	return start
}

// callIndex is the index of the last content in cs that holds the call fr
// answers, or -1.
func callIndex(cs []*genai.Content, fr *genai.FunctionResponse) int {
	for i := len(cs) - 1; i >= 0; i-- {
		for _, p := range partsOf(cs[i]) {
			if p == nil {
				continue
			}
			fc := p.FunctionCall
			if fc == nil {
				continue
			}
			if fr.ID != "" && fc.ID != "" {
				if fr.ID == fc.ID {
					return i
				}
				continue
			}
			if fr.Name == fc.Name {
				return i
			}
		}
	}
	return -1
}

func partsOf(c *genai.Content) []*genai.Part {
	if c == nil {
		return nil
	}
	return c.Parts
}

// ---------------------------------------------------------------------------
// The summary message and the continuation (DESIGN §6)
// ---------------------------------------------------------------------------

const (
	summaryHeader = "[Conversation summary: the earlier part of this conversation was compacted to fit the context window. It is reference material about work already done.]"
	summaryFooter = "[End of summary]"
	// continuationLead frames the user's request as reference, not a new task.
	continuationLead = "[Continuation: the user's request at the time of compaction is quoted below for reference. Continue the current task from where it stopped; do not redo finished steps and do not ask the user to repeat anything.]"
)

// summaryContent builds the one user message that stands for the summarized
// contents: header, summary and (when known) the continuation.
func summaryContent(summary, userRequest string) *genai.Content {
	var b strings.Builder
	b.Grow(len(summaryHeader) + len(summary) + len(userRequest) + len(continuationLead) + 64)
	b.WriteString(summaryHeader)
	b.WriteString("\n\n")
	b.WriteString(strings.TrimSpace(summary))
	b.WriteString("\n\n")
	b.WriteString(summaryFooter)
	if userRequest != "" {
		b.WriteString("\n\n")
		b.WriteString(continuationLead)
		b.WriteString("\n<user_request>\n")
		b.WriteString(userRequest)
		b.WriteString("\n</user_request>")
	}
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: b.String()}}}
}

// contentText joins the text parts of c (thoughts excluded).
func contentText(c *genai.Content) string {
	if c == nil {
		return ""
	}
	var parts []string
	for _, p := range c.Parts {
		if p != nil && p.Text != "" && !p.Thought {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// latestUserText is the newest user-authored text: the content that started
// the invocation when it has text, else the newest user message with text in
// the contents (function responses are not user requests).
func latestUserText(invocationUser *genai.Content, cs []*genai.Content) string {
	if t := contentText(invocationUser); t != "" {
		return t
	}
	for i := len(cs) - 1; i >= 0; i-- {
		c := cs[i]
		if c == nil || c.Role != genai.RoleUser || isSynthetic(c) {
			continue
		}
		if t := contentText(c); t != "" {
			return t
		}
	}
	return ""
}

// latestUserIndex is the index of the newest user message with text in cs
// (the content latestUserText falls back to), or -1.
func latestUserIndex(cs []*genai.Content) int {
	for i := len(cs) - 1; i >= 0; i-- {
		if c := cs[i]; c != nil && c.Role == genai.RoleUser && !isSynthetic(c) && contentText(c) != "" {
			return i
		}
	}
	return -1
}

// quotesRequest reports whether a stored continuation quotes the user message
// c: the start of its text (which a bounded continuation always keeps)
// appears in it.
func quotesRequest(stored string, c *genai.Content) bool {
	head := strings.TrimSpace(validPrefix(sanitizeUTF8(contentText(c)), 16))
	return head == "" || strings.Contains(stored, head)
}

// truncateMiddle bounds s to about maxBytes, keeping its head and tail (the
// facts an agent learned are often at either end) and saying what was cut.
// It never splits a UTF-8 sequence.
func truncateMiddle(s string, maxBytes int) string {
	if maxBytes <= 0 {
		return ""
	}
	if len(s) <= maxBytes {
		return s
	}
	marker := "\n[... " + strconv.Itoa(len(s)-maxBytes) + " bytes omitted ...]\n"
	keep := maxBytes - len(marker)
	if keep < 16 {
		return validPrefix(s, maxBytes)
	}
	head := validPrefix(s, keep*2/3)
	tail := validSuffix(s, keep-len(head))
	return head + marker + tail
}

func validPrefix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func validSuffix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// sanitizeUTF8 replaces invalid UTF-8 so templates and providers accept it.
func sanitizeUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
