package contextguardtest

import (
	"time"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"google.golang.org/genai"
)

// The ADK-free parts of the kit live in coretest and are shared by the kits
// of both ADK lines. The few names below are the ones a test of a user's own
// agent needs (a scenario, its plans, a fake clock, the checks it asserts);
// everything else (content generators, fault values, provider error styles,
// the seed matrix, sizes and framing costs) is used from coretest directly.

type (
	// Scenario is one scripted conversation that [Run] plays; see
	// [coretest.Scenario].
	Scenario = coretest.Scenario
	// TurnPlan is what the model does in one user turn; see
	// [coretest.TurnPlan].
	TurnPlan = coretest.TurnPlan
	// ToolCall is one function call of a plan, made by [Call] or
	// [CallWith]; see [coretest.ToolCall].
	ToolCall = coretest.ToolCall
	// Result is what [Run] measured; see [coretest.Result].
	Result = coretest.Result
	// FakeClock is a clock that moves only when the test advances it, for
	// the guard's WithClock; see [coretest.FakeClock].
	FakeClock = coretest.FakeClock
)

// ErrStepLimit is recorded in Result.Errors when a turn exceeded
// RunConfig.MaxStepsPerTurn; see [coretest.ErrStepLimit].
var ErrStepLimit = coretest.ErrStepLimit

// MarkerPattern matches the markers the kit plants in user messages
// (MARK-<hex>); see [Marker].
var MarkerPattern = coretest.MarkerPattern

// NewFakeClock returns a clock at start (a fixed instant when start is the
// zero time). See [coretest.NewFakeClock].
func NewFakeClock(start time.Time) *FakeClock { return coretest.NewFakeClock(start) }

// Call returns a [ToolCall] of the named tool with a result of about size
// bytes, of the tool's default kind; see [coretest.Call].
func Call(name string, size int) ToolCall { return coretest.Call(name, size) }

// CallWith returns a [ToolCall] of the named tool with args as its
// arguments, exactly, as a model calls a real tool: the guard's
// recall_context, or a tool of the test's own (give it to the agent, with
// [Run] through RunConfig.Tools). See [coretest.CallWith].
func CallWith(name string, args map[string]any) ToolCall { return coretest.CallWith(name, args) }

// Parallel returns one model step making all calls at once; see
// [coretest.Parallel].
func Parallel(calls ...ToolCall) []coretest.ToolStep { return coretest.Parallel(calls...) }

// Sequential returns one model step per call; see [coretest.Sequential].
func Sequential(calls ...ToolCall) []coretest.ToolStep { return coretest.Sequential(calls...) }

// CheckPairs reports the first function call without its response, or
// response without its call, in contents; see [coretest.CheckPairs].
func CheckPairs(contents []*genai.Content) error { return coretest.CheckPairs(contents) }

// FlattenText renders contents as plain text, one line per part, to assert
// what a request or a summary contains; see [coretest.FlattenText].
func FlattenText(contents []*genai.Content) string { return coretest.FlattenText(contents) }

// Marker returns the deterministic marker for a seed, e.g. "MARK-3fa85f64";
// see [coretest.Marker].
func Marker(seed int64) string { return coretest.Marker(seed) }

// IsOverflowError reports whether err is a context-overflow error of any of
// the shapes the scripted model produces; see [coretest.IsOverflowError].
func IsOverflowError(err error) bool { return coretest.IsOverflowError(err) }
