package core

import (
	"bytes"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/tokens"
)

// ---------------------------------------------------------------------------
// Token accounting (ARCHITECTURE.md, Counting)
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
func requestTokens(e tokenEstimator, req *Request) int {
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
// Summary injection and the watermark (ARCHITECTURE.md, Summary injection and the watermark)
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
	// anchor is the anchor of the cut located without one in state
	// (locateCut), to store; "" when there is nothing to store.
	anchor string
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

// locateCut finds where the stored summary ends in raw. With a host that
// anchors coverage (cov) and an anchor in state, the anchor decides
// (Coverage.Covered), and an anchor the host's log no longer holds cuts
// nothing, like a fingerprint mismatch. Otherwise the cut is located as
// locateWatermark does; with cov, anchor is then the anchor of that cut,
// for the caller to store (state written before the host anchored it).
func locateCut(raw []*genai.Content, st guardState, fingerprint func(*genai.Content) string, cov Coverage) (w int, reason, anchor string) {
	if cov != nil && st.anchor != "" {
		n, ok := cov.Covered(raw, st.anchor)
		switch {
		case !ok:
			return 0, "anchor not found", ""
		case n <= 0 || n > len(raw):
			return 0, "anchor covers no contents", ""
		}
		return n, "", ""
	}
	w, reason = locateWatermark(raw, st, fingerprint)
	if w > 0 {
		anchor = anchorAt(cov, raw, w)
	}
	return w, reason, anchor
}

// anchorAt is the host's name for the log position of the last of the
// first n contents of raw, "" without a host that anchors coverage.
func anchorAt(cov Coverage, raw []*genai.Content, n int) string {
	if cov == nil || n <= 0 || n > len(raw) {
		return ""
	}
	return cov.Anchor(raw, n)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// pairSafeStart moves a cut at index start back until no function response
// in cs[start:] answers a call made before start, so the kept contents never
// start with, or hold, a response whose call was cut away (and the cut
// contents never hold a call whose response is kept). Every cut the guard
// makes goes through it: the summary's cut, the sliding window's split, the
// trim to the current request. Responses are matched to the calls of the
// kept contents as contextguardtest.CheckPairs does: by ID when both have
// one, else by name, in order.
func pairSafeStart(cs []*genai.Content, start int) int {
	for start > 0 && start < len(cs) {
		j := orphanedCall(cs, start)
		if j < 0 {
			return start
		}
		start = j
	}
	return start
}

// orphanedCall returns the index, before split, of the content holding the
// call that the first unmatched function response of cs[split:] answers, or
// -1 when every response there is answered from cs[split:] (responses whose
// call is nowhere cannot be helped by moving the split and are ignored).
func orphanedCall(cs []*genai.Content, split int) int {
	type call struct{ id, name string }
	var pending []call
	for i := split; i < len(cs); i++ {
		for _, p := range partsOf(cs[i]) {
			if p == nil || p.FunctionResponse == nil {
				continue
			}
			fr := p.FunctionResponse
			k := slices.IndexFunc(pending, func(c call) bool {
				if fr.ID != "" && c.id != "" {
					return fr.ID == c.id
				}
				return fr.Name == c.name
			})
			if k >= 0 {
				pending = slices.Delete(pending, k, k+1)
				continue
			}
			if j := callIndex(cs[:split], fr); j >= 0 {
				return j
			}
		}
		for _, p := range partsOf(cs[i]) {
			if p != nil && p.FunctionCall != nil {
				pending = append(pending, call{id: p.FunctionCall.ID, name: p.FunctionCall.Name})
			}
		}
	}
	return -1
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
// The summary message and the continuation (ARCHITECTURE.md, Summary injection and the watermark)
// ---------------------------------------------------------------------------

const (
	summaryHeader = "[Conversation summary: the earlier part of this conversation was compacted to fit the context window. It is reference material about work already done.]"
	summaryFooter = "[End of summary]"
	// continuationLead frames the user's request as reference, not a new task.
	continuationLead = "[Continuation: the user's request at the time of compaction is quoted below for reference. Continue the current task from where it stopped; do not redo finished steps and do not ask the user to repeat anything.]"
)

// summaryContent builds the one user message that stands for the summarized
// contents: header, summary and (when known) the continuation, which quotes
// the user's request and carries its attachments (inline data, file
// references) as parts after the text, so the model sees them as the user
// sent them and their tokens are counted with the message. Nil attachments
// are skipped.
// isSummaryMessage reports whether c is a summary message the guard made.
func isSummaryMessage(c *genai.Content) bool {
	return c != nil && c.Role == genai.RoleUser && len(c.Parts) > 0 && c.Parts[0] != nil &&
		strings.HasPrefix(c.Parts[0].Text, summaryHeader)
}

func summaryContent(summary, userRequest string, attachments ...*genai.Part) *genai.Content {
	var b strings.Builder
	b.Grow(len(summaryHeader) + len(summary) + len(userRequest) + len(continuationLead) + len(attachmentsNote) + 64)
	b.WriteString(summaryHeader)
	b.WriteString("\n\n")
	b.WriteString(strings.TrimSpace(summary))
	b.WriteString("\n\n")
	b.WriteString(summaryFooter)
	n := 0
	for _, p := range attachments {
		if p != nil {
			n++
		}
	}
	if userRequest != "" || n > 0 {
		b.WriteString("\n\n")
		b.WriteString(continuationLead)
		b.WriteString("\n<user_request>\n")
		b.WriteString(userRequest)
		b.WriteString("\n</user_request>")
		if n > 0 {
			b.WriteString("\n")
			b.WriteString(attachmentsNote)
		}
	}
	parts := make([]*genai.Part, 1, 1+n)
	parts[0] = &genai.Part{Text: b.String()}
	for _, p := range attachments {
		if p != nil {
			parts = append(parts, p)
		}
	}
	return &genai.Content{Role: genai.RoleUser, Parts: parts}
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

// ---------------------------------------------------------------------------
// The user's current request (ARCHITECTURE.md, Summary injection and the watermark)
// ---------------------------------------------------------------------------

// foreignContextLead is the first part ADK gives the user-role message that
// shows another agent's events to the current one (ConvertForeignEvent in
// ADK's contents processor): after a transfer, the coordinator's words and
// tool calls reach the sub-agent as such messages. They are context, never
// the user's request.
const foreignContextLead = "For context:"

// attachmentsNote follows the quote when the summary message carries the
// request's attachments, so the model knows whose they are.
const attachmentsNote = "[The attachments of the user's request follow.]"

// isForeignContext reports whether c is ADK's rendering of another agent's
// event ("For context: [agent] said: ...").
func isForeignContext(c *genai.Content) bool {
	if c == nil || c.Role != genai.RoleUser {
		return false
	}
	for _, p := range c.Parts {
		if p != nil {
			return p.Text == foreignContextLead
		}
	}
	return false
}

// isAttachment reports whether p is media the user sent: inline data or a
// file reference.
func isAttachment(p *genai.Part) bool {
	return p != nil && !p.Thought && (p.InlineData != nil || p.FileData != nil)
}

// isUserRequest reports whether c is a message the user wrote: a user-role
// content (or one without a role: the invocation's content may lack it) with
// text or attachments, that is neither an adapter's synthetic continuation,
// nor another agent's "For context:" message, nor a tool result.
func isUserRequest(c *genai.Content) bool {
	if c == nil || (c.Role != genai.RoleUser && c.Role != "") || isSynthetic(c) || isForeignContext(c) {
		return false
	}
	quotable := false
	for _, p := range c.Parts {
		if p == nil {
			continue
		}
		if p.FunctionResponse != nil {
			return false
		}
		if (p.Text != "" && !p.Thought) || isAttachment(p) {
			quotable = true
		}
	}
	return quotable
}

// currentRequest is the one place that decides which content is the user's
// current request, the message a compaction must never lose: the content
// that started the invocation (agent.CallbackContext.UserContent) when it is
// a request the user wrote, else the newest content of cs the user wrote
// (isUserRequest: never another agent's "For context:" message, a synthetic
// continuation or a tool result). A request of images or files alone is the
// request; it is never passed over for an older text. index is where the
// request lies in cs (the newest equal content for the invocation's), or -1
// when cs does not hold it; c is nil when there is no request at all.
func currentRequest(invocationUser *genai.Content, cs []*genai.Content) (c *genai.Content, index int) {
	if isUserRequest(invocationUser) {
		for i := len(cs) - 1; i >= 0; i-- {
			if sameRequest(cs[i], invocationUser) {
				return cs[i], i
			}
		}
		return invocationUser, -1
	}
	for i := len(cs) - 1; i >= 0; i-- {
		if isUserRequest(cs[i]) {
			return cs[i], i
		}
	}
	return nil, -1
}

// sameRequest reports whether the content c holds the same request as u:
// ADK rebuilds the contents from its event log as copies, without empty
// parts, so they are compared by value, empty parts skipped, cheapest fields
// first.
func sameRequest(c, u *genai.Content) bool {
	if c == u {
		return true
	}
	if c == nil || u == nil || c.Role != genai.RoleUser {
		return false
	}
	i, j := 0, 0
	for {
		for i < len(c.Parts) && blankPart(c.Parts[i]) {
			i++
		}
		for j < len(u.Parts) && blankPart(u.Parts[j]) {
			j++
		}
		if i == len(c.Parts) || j == len(u.Parts) {
			return i == len(c.Parts) && j == len(u.Parts)
		}
		p, q := c.Parts[i], u.Parts[j]
		if p.Text != q.Text || p.Thought != q.Thought || p.FunctionResponse != nil || q.FunctionResponse != nil ||
			!sameAttachment(p, q) {
			return false
		}
		i++
		j++
	}
}

// blankPart reports whether p is nil or empty, a part ADK drops when it
// builds the contents. The fields every part of a conversation uses are
// tested first, so the reflective test (which copies the part) runs only on
// parts that are probably blank: it runs on every call with a summary.
func blankPart(p *genai.Part) bool {
	if p == nil {
		return true
	}
	if p.Text != "" || p.FunctionCall != nil || p.FunctionResponse != nil || p.InlineData != nil || p.FileData != nil {
		return false
	}
	return reflect.ValueOf(*p).IsZero()
}

// coveredRequest is the user's current request when a summary cutting the
// contents at cut stands for it: the request lies before cut, or nowhere in
// the contents. It is nil when the request is sent verbatim after the cut,
// or there is none. A summary message built for cut carries its attachments
// (summaryMessage).
func coveredRequest(t *turn, cut int) *genai.Content {
	var user *genai.Content
	if t.ctx != nil {
		user = t.ctx.UserContent()
	}
	c, i := currentRequest(user, t.raw)
	if i >= cut {
		return nil
	}
	return c
}

// latestUserText is the text of the user's current request (currentRequest),
// "" when it has none.
func latestUserText(invocationUser *genai.Content, cs []*genai.Content) string {
	c, _ := currentRequest(invocationUser, cs)
	return contentText(c)
}

// requestAttachments returns the attachments of the request c, in order, as
// new parts that share the media (never copied: an image may be megabytes)
// but none of the part's other fields; nil when there are none.
func requestAttachments(c *genai.Content) []*genai.Part {
	var out []*genai.Part
	for _, p := range partsOf(c) {
		if isAttachment(p) {
			out = append(out, &genai.Part{
				InlineData:      p.InlineData,
				FileData:        p.FileData,
				VideoMetadata:   p.VideoMetadata,
				MediaResolution: p.MediaResolution,
			})
		}
	}
	return out
}

// sameAttachment reports whether two parts carry the same media (both none
// included).
func sameAttachment(p, q *genai.Part) bool {
	if p == q {
		return true
	}
	if p == nil || q == nil {
		return false
	}
	a, b := p.InlineData, q.InlineData
	if (a == nil) != (b == nil) || (a != nil && a != b && (a.MIMEType != b.MIMEType || a.DisplayName != b.DisplayName || !bytes.Equal(a.Data, b.Data))) {
		return false
	}
	f, g := p.FileData, q.FileData
	if (f == nil) != (g == nil) || (f != nil && *f != *g) {
		return false
	}
	return reflect.DeepEqual(p.VideoMetadata, q.VideoMetadata) && reflect.DeepEqual(p.MediaResolution, q.MediaResolution)
}

// attachmentLine names one attachment in the quoted request, so the quote
// says what was attached even where the media itself is not sent with it.
func attachmentLine(p *genai.Part) string {
	switch {
	case p == nil:
		return ""
	case p.InlineData != nil:
		return "[attachment: " + p.InlineData.MIMEType + ", " + strconv.Itoa(len(p.InlineData.Data)) + " bytes]"
	case p.FileData != nil:
		return "[attachment: file " + p.FileData.FileURI + " (" + p.FileData.MIMEType + ")]"
	}
	return ""
}

// continuationText is the request c as the continuation quotes it: its text,
// then one line naming each attachment.
func continuationText(c *genai.Content) string {
	text := contentText(c)
	var b strings.Builder
	b.WriteString(text)
	for _, p := range partsOf(c) {
		if isAttachment(p) {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(attachmentLine(p))
		}
	}
	return sanitizeUTF8(b.String())
}

// requestHeadBytes is how much of a request's text must appear in a stored
// continuation for it to count as quoting the request: a bounded
// continuation always keeps at least this much of the head.
const requestHeadBytes = 16

// quotesRequest reports whether a stored continuation quotes the user
// message c: the start of its text appears in it, or, for a message of
// attachments alone, the line naming its first attachment.
func quotesRequest(stored string, c *genai.Content) bool {
	head := strings.TrimSpace(validPrefix(sanitizeUTF8(contentText(c)), requestHeadBytes))
	if head == "" {
		for _, p := range partsOf(c) {
			if isAttachment(p) {
				head = sanitizeUTF8(attachmentLine(p))
				break
			}
		}
	}
	return head == "" || strings.Contains(stored, head)
}

// Bounds of the quoted request.
const (
	// continuationShare: the quoted request's text may take up to
	// 1/continuationShare of the room the system instruction and tools leave
	// under the threshold, and is quoted in full within it. The other half
	// is the summary's and the newest contents'; a larger request keeps its
	// head and tail.
	continuationShare = 2
	// minContinuationTokens is the least a request is quoted with, however
	// full the window: its head and tail still say what the task is.
	minContinuationTokens = 64
	// minContinuationBytes is the smallest cut truncateMiddle is asked for.
	minContinuationBytes = 64
	// bytesPerTokenGuess sizes the first cut of a long request; the cut is
	// then shrunk until it counts within the bound.
	bytesPerTokenGuess = 3
)

// continuationBound is the most tokens (calibrated) the quoted request may
// take in t's request: 1/continuationShare of the room under the threshold
// that the system instruction and tools leave.
func continuationBound(t *turn) int {
	cal := t.cal
	if cal.factor <= 0 {
		// Before the turn is calibrated (the summary is injected first).
		cal = calibration{factor: t.est.defaultFactor()}
	}
	fixed := 0
	if t.req.Config != nil {
		fixed = satAdd(t.est.content(t.req.Config.SystemInstruction), toolsTokens(t.est, t.req.Config.Tools))
	}
	return max((t.lim.threshold-cal.scale(fixed))/continuationShare, minContinuationTokens)
}

// boundContinuation quotes s in full when it fits continuationBound, else
// keeps its head and tail (truncateMiddle) cut to fit.
func boundContinuation(t *turn, s string) string {
	maxTokens := continuationBound(t)
	cal := t.cal
	if cal.factor <= 0 {
		cal = calibration{factor: t.est.defaultFactor()}
	}
	if cal.scale(t.est.text(s)) <= maxTokens {
		return s
	}
	n := min(maxTokens*bytesPerTokenGuess, len(s))
	for n > minContinuationBytes {
		cut := truncateMiddle(s, n)
		if cal.scale(t.est.text(cut)) <= maxTokens {
			return cut
		}
		n = n * 3 / 4
	}
	return truncateMiddle(s, minContinuationBytes)
}

// summaryMessage is the summary message for summary and the quoted request,
// carrying the attachments of cur (the user's current request, when the
// summary stands for it; nil otherwise). It is memoized per session while
// the summary, the quote and the attachments are unchanged, so the steady
// state neither rebuilds nor recounts it.
func summaryMessage(t *turn, summary, request string, cur *genai.Content) *genai.Content {
	atts := requestAttachments(cur)
	m := &t.sess.summary
	if m.msg == nil || m.summary != summary || m.request != request || !carries(m.msg, atts) {
		m.summary, m.request, m.msg = summary, request, summaryContent(summary, request, atts...)
	}
	return m.msg
}

// carries reports whether the summary message msg carries exactly the
// attachments atts after its text.
func carries(msg *genai.Content, atts []*genai.Part) bool {
	if len(msg.Parts) != 1+len(atts) {
		return false
	}
	for i, p := range atts {
		if !sameAttachment(msg.Parts[1+i], p) {
			return false
		}
	}
	return true
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
