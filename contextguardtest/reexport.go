package contextguardtest

import (
	"time"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"google.golang.org/genai"
)

// The ADK-free parts of the kit live in coretest and are shared by the kits
// of both ADK lines; the names below re-export them unchanged.

// Scenarios and plans.
type (
	// Scenario is one scripted conversation; see [coretest.Scenario].
	Scenario = coretest.Scenario
	// TurnPlan is what the model does in one user turn; see
	// [coretest.TurnPlan].
	TurnPlan = coretest.TurnPlan
	// ToolStep is one model response's function calls; see
	// [coretest.ToolStep].
	ToolStep = coretest.ToolStep
	// ToolCall is one function call of a plan; see [coretest.ToolCall].
	ToolCall = coretest.ToolCall
	// Kind is a kind of generated content; see [coretest.Kind].
	Kind = coretest.Kind
	// ToolArgs are the arguments the scripted model passes to fake tools;
	// see [coretest.ToolArgs].
	ToolArgs = coretest.ToolArgs
	// ToolOutput is what fake tools return; see [coretest.ToolOutput].
	ToolOutput = coretest.ToolOutput
)

// Provider errors, requests and results.
type (
	// ErrorStyle selects a provider's overflow error; see
	// [coretest.ErrorStyle].
	ErrorStyle = coretest.ErrorStyle
	// OverflowError is a provider's context-overflow error; see
	// [coretest.OverflowError].
	OverflowError = coretest.OverflowError
	// RequestRecord describes one request the scripted model received;
	// see [coretest.RequestRecord].
	RequestRecord = coretest.RequestRecord
	// Result is what [Run] measured; see [coretest.Result].
	Result = coretest.Result
	// Fault is a failure a [SummarizerModel] can inject; see
	// [coretest.Fault].
	Fault = coretest.Fault
	// SummarizerCall records one call to a [SummarizerModel]; see
	// [coretest.SummarizerCall].
	SummarizerCall = coretest.SummarizerCall
	// FakeClock is a clock that moves only when the test advances it, for
	// the guard's WithClock; see [coretest.FakeClock].
	FakeClock = coretest.FakeClock
)

// NewFakeClock returns a clock at start (a fixed instant when start is the
// zero time). See [coretest.NewFakeClock].
func NewFakeClock(start time.Time) *FakeClock { return coretest.NewFakeClock(start) }

// Sizes, windows, framing costs and provider styles; see coretest.
const (
	// DefaultResponseSize is the size of the model's final text of a turn.
	DefaultResponseSize = coretest.DefaultResponseSize
	// DefaultUserTextSize is the size of a user message.
	DefaultUserTextSize = coretest.DefaultUserTextSize
	// Window4k is the seed matrix's 4k window.
	Window4k = coretest.Window4k
	// Window8k is the seed matrix's 8k window.
	Window8k = coretest.Window8k
	// Window200k is the seed matrix's 200k window.
	Window200k = coretest.Window200k
	// Window1M is the seed matrix's 1M window.
	Window1M = coretest.Window1M
	// SeedMessageOverheadBytes is the per-content framing of [SeedCounter].
	SeedMessageOverheadBytes = coretest.SeedMessageOverheadBytes
	// SeedElementOverheadBytes is the per-element framing of [SeedCounter].
	SeedElementOverheadBytes = coretest.SeedElementOverheadBytes
	// MessageOverheadTokens is the per-content framing of [TokenizerCounter].
	MessageOverheadTokens = coretest.MessageOverheadTokens
	// ElementOverheadTokens is the per-element framing of [TokenizerCounter].
	ElementOverheadTokens = coretest.ElementOverheadTokens
	// ImageBaseTokens is the base cost of an image ([ImageTokens]).
	ImageBaseTokens = coretest.ImageBaseTokens
	// ImageTileTokens is the cost of one 512x512 image tile.
	ImageTileTokens = coretest.ImageTileTokens
	// BlobBytesPerToken is the rule for non-image blobs ([BlobTokens]).
	BlobBytesPerToken = coretest.BlobBytesPerToken
	// BlobBaseTokens is the fixed cost of one non-image blob.
	BlobBaseTokens = coretest.BlobBaseTokens
	// HugeSummarySize is the size of the summary [FaultHuge] returns.
	HugeSummarySize = coretest.HugeSummarySize
	// DefaultSummarySize is the default size of a [SummarizerModel]'s
	// summaries.
	DefaultSummarySize = coretest.DefaultSummarySize

	// ErrorGemini is Gemini's overflow error (a genai.APIError).
	ErrorGemini = coretest.ErrorGemini
	// ErrorAnthropic is Anthropic's "prompt is too long" error.
	ErrorAnthropic = coretest.ErrorAnthropic
	// ErrorOpenAI is OpenAI's context_length_exceeded error.
	ErrorOpenAI = coretest.ErrorOpenAI
	// ErrorGeneric is an overflow error that states no count nor limit.
	ErrorGeneric = coretest.ErrorGeneric

	// KindPrettyJSON is an indented JSON array of API objects.
	KindPrettyJSON = coretest.KindPrettyJSON
	// KindCompactJSON is the same objects, compact.
	KindCompactJSON = coretest.KindCompactJSON
	// KindYAML is Kubernetes-style manifests.
	KindYAML = coretest.KindYAML
	// KindKubectlTable is kubectl get pods -o wide.
	KindKubectlTable = coretest.KindKubectlTable
	// KindKubectlDescribe is kubectl describe pod.
	KindKubectlDescribe = coretest.KindKubectlDescribe
	// KindMarkdownTable is a GitHub-flavoured table.
	KindMarkdownTable = coretest.KindMarkdownTable
	// KindLogLines is structured service logs.
	KindLogLines = coretest.KindLogLines
	// KindGoCode is Go source.
	KindGoCode = coretest.KindGoCode
	// KindBase64 is base64 of random bytes.
	KindBase64 = coretest.KindBase64
	// KindProseEnglish is English prose.
	KindProseEnglish = coretest.KindProseEnglish
	// KindProseSpanish is Spanish prose.
	KindProseSpanish = coretest.KindProseSpanish
	// KindProseChinese is Chinese prose.
	KindProseChinese = coretest.KindProseChinese
	// KindPrometheus is the Prometheus exposition format.
	KindPrometheus = coretest.KindPrometheus
	// KindSQLRows is a psql result table.
	KindSQLRows = coretest.KindSQLRows
	// KindGrep is grep -n output over a repo.
	KindGrep = coretest.KindGrep
	// KindTestOutput is go test -v output.
	KindTestOutput = coretest.KindTestOutput
)

// Errors, faults and patterns; see coretest.
var (
	// ErrStepLimit is recorded in Result.Errors when a turn exceeded
	// RunConfig.MaxStepsPerTurn.
	ErrStepLimit = coretest.ErrStepLimit
	// ErrSummarizerFault is the error [FaultError] returns.
	ErrSummarizerFault = coretest.ErrSummarizerFault
	// MarkerPattern matches the markers the kit plants (MARK-<hex>).
	MarkerPattern = coretest.MarkerPattern
	// SeedToolNames are the tool names the seed matrix uses.
	SeedToolNames = coretest.SeedToolNames

	// FaultNone behaves normally.
	FaultNone = coretest.FaultNone
	// FaultError returns [ErrSummarizerFault].
	FaultError = coretest.FaultError
	// FaultEmpty returns a response with no text.
	FaultEmpty = coretest.FaultEmpty
	// FaultHuge returns a summary of [HugeSummarySize] characters.
	FaultHuge = coretest.FaultHuge
	// FaultPanic panics inside GenerateContent.
	FaultPanic = coretest.FaultPanic
	// FaultSlow blocks until the call's context ends (and returns its
	// error) or until [SummarizerModel.Release]. See [coretest.FaultSlow].
	FaultSlow = coretest.FaultSlow
	// FaultHang ignores the call's context and blocks until
	// [SummarizerModel.Release]. See [coretest.FaultHang].
	FaultHang = coretest.FaultHang
)

// Call returns a ToolCall of the tool's default kind.
func Call(name string, size int) ToolCall { return coretest.Call(name, size) }

// Parallel returns one step making all calls at once.
func Parallel(calls ...ToolCall) []ToolStep { return coretest.Parallel(calls...) }

// Sequential returns one step per call.
func Sequential(calls ...ToolCall) []ToolStep { return coretest.Sequential(calls...) }

// SeedMatrix returns the 91 scenarios of the stress matrix.
func SeedMatrix() []Scenario { return coretest.SeedMatrix() }

// Kinds returns every content kind.
func Kinds() []Kind { return coretest.Kinds() }

// Generate returns size bytes of content of the kind, deterministic in seed.
func Generate(kind Kind, size int, seed int64) string { return coretest.Generate(kind, size, seed) }

// PNG returns a deterministic, poorly compressible PNG of the given dimensions.
func PNG(width, height int, seed int64) []byte { return coretest.PNG(width, height, seed) }

// PNGOfSize returns a deterministic PNG of about size bytes (cached: do not modify it).
func PNGOfSize(size int, seed int64) []byte { return coretest.PNGOfSize(size, seed) }

// PDF returns deterministic bytes of exactly size bytes shaped like a PDF.
func PDF(size int, seed int64) []byte { return coretest.PDF(size, seed) }

// DefaultKind returns the kind of output a tool of this name produces.
func DefaultKind(name string) Kind { return coretest.DefaultKind(name) }

// MCPToolName returns the name of the i-th tool [MCPTools] returns.
func MCPToolName(i int) string { return coretest.MCPToolName(i) }

// MCPSchema returns a JSON Schema object of about size bytes.
func MCPSchema(size int, seed int64) map[string]any { return coretest.MCPSchema(size, seed) }

// CheckPairs reports the first function call without its response, or
// response without its call, in contents; see [coretest.CheckPairs].
func CheckPairs(contents []*genai.Content) error { return coretest.CheckPairs(contents) }

// FlattenText renders contents as plain text, one line per part.
func FlattenText(contents []*genai.Content) string { return coretest.FlattenText(contents) }

// Marker returns the deterministic marker for a seed, e.g. "MARK-3fa85f64".
func Marker(seed int64) string { return coretest.Marker(seed) }

// TurnTag returns the tag "[turn N]" user messages start with.
func TurnTag(turn int) string { return coretest.TurnTag(turn) }

// UserMessage returns the text of a user message: turn tag, marker, body.
func UserMessage(turn int, marker, body string) string {
	return coretest.UserMessage(turn, marker, body)
}

// IsOverflowError reports whether err is a context-overflow error of any of
// the shapes the scripted model produces.
func IsOverflowError(err error) bool { return coretest.IsOverflowError(err) }

// O200kCount returns the exact o200k_base token count of s.
func O200kCount(s string) int { return coretest.O200kCount(s) }

// BlobTokens returns what [TokenizerCounter] charges for one inline blob.
func BlobTokens(mime string, data []byte) int { return coretest.BlobTokens(mime, data) }

// ImageTokens is OpenAI's high-detail image rule.
func ImageTokens(width, height int) int { return coretest.ImageTokens(width, height) }
