package coretest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/genai"
)

// Measuring a run: what a driver records of each model call (Meter) and the
// Result it reports, with the ground-truth counters it uses.

// ErrStepLimit is recorded in Result.Errors when a turn exceeded the
// driver's limit of model calls per turn.
var ErrStepLimit = errors.New("contextguardtest: too many model calls in one turn")

// Result is what a driver (each ADK line's Run) measured.
//
// Effective input: for the request of step k, effectiveInput(k) = tokens sent
// at step k-1 + ground-truth tokens of the contents ADK appended since step
// k-1 (raw(k)[len(raw(k-1)):], computed as raw(k) - raw(k-1) since counters
// are additive); for the first step it is the raw request. It
// is what the request would weigh had the guard done nothing new at step k.
// A compaction step is a step whose request starts with a summary the
// previous step's did not (a summary written in the background while tools
// ran is called outside the step), or during whose BeforeModel phase the
// summarizer was called and fewer contents were sent than ADK built without
// a summary message; it is non-shrinking if the request sent is not smaller
// than the effective input (a compaction loop). Utilization at trigger is
// effectiveInput/Window at compaction steps.
type Result struct {
	Scenario string // FullName of the scenario
	Window   int    // the model's window
	Turns    int    // user turns played
	Steps    int    // model requests received

	SummarizerCalls         int // total calls on the run's summarizer during the run
	CompactionSteps         int // steps that compacted (see above)
	NonShrinkingCompactions int // compaction steps whose output >= effective input

	MaxRealTokens            int       // largest ground-truth request the model received
	MaxUtilization           float64   // MaxRealTokens / Window
	UtilizationAtTrigger     []float64 // effectiveInput/Window at each compaction step
	MeanUtilizationAtTrigger float64   // mean of UtilizationAtTrigger (0 if none)

	OverflowsRejected  int // requests the model rejected as too long
	OverflowsSurfaced  int // overflow errors that reached the caller of the runner
	OverflowsRecovered int // rejected but not surfaced (recovered by the guard)

	PairViolations    int // requests failing [CheckPairs]
	MissingLatestUser int // requests without the marker of the user's latest message
	// LostMarkers is the number of distinct markers of a raw request (as ADK
	// built it) found neither in the request the model received nor in the
	// input of any summarizer call made up to it: content dropped without
	// being summarized. Measured only when the run has a summarizer.
	LostMarkers int

	Requests []RequestRecord // one per model request, in order
	Errors   []error         // errors surfaced by the runner, per turn
	Duration time.Duration
}

// String returns a one-line summary.
func (r *Result) String() string {
	return fmt.Sprintf("%s: turns=%d steps=%d summarizer=%d compactions=%d nonShrinking=%d maxReal=%d/%d (%.1f%%) trigger=%.1f%% overflows rejected=%d surfaced=%d recovered=%d pairViolations=%d missingUser=%d lostMarkers=%d errors=%d in %s",
		r.Scenario, r.Turns, r.Steps, r.SummarizerCalls, r.CompactionSteps, r.NonShrinkingCompactions,
		r.MaxRealTokens, r.Window, 100*r.MaxUtilization, 100*r.MeanUtilizationAtTrigger,
		r.OverflowsRejected, r.OverflowsSurfaced, r.OverflowsRecovered, r.PairViolations, r.MissingLatestUser,
		r.LostMarkers, len(r.Errors), r.Duration.Round(time.Millisecond))
}

// Finish derives the aggregate fields from r.Requests (and
// r.OverflowsSurfaced, which the driver counts).
func (r *Result) Finish() {
	r.Steps = len(r.Requests)
	r.MaxRealTokens, r.OverflowsRejected, r.CompactionSteps, r.NonShrinkingCompactions = 0, 0, 0, 0
	r.PairViolations, r.MissingLatestUser, r.LostMarkers = 0, 0, 0
	r.UtilizationAtTrigger, r.MaxUtilization, r.MeanUtilizationAtTrigger = nil, 0, 0
	var sum float64
	lost := map[string]bool{}
	for _, rec := range r.Requests {
		r.MaxRealTokens = max(r.MaxRealTokens, rec.Tokens)
		if rec.Rejected {
			r.OverflowsRejected++
		}
		if rec.Compaction {
			r.CompactionSteps++
			if rec.NonShrinking {
				r.NonShrinkingCompactions++
			}
			if r.Window > 0 {
				u := float64(rec.EffectiveInput) / float64(r.Window)
				r.UtilizationAtTrigger = append(r.UtilizationAtTrigger, u)
				sum += u
			}
		}
		if rec.PairError != nil {
			r.PairViolations++
		}
		if !rec.HasLatestUser {
			r.MissingLatestUser++
		}
		for _, m := range rec.LostMarkers {
			if !lost[m] {
				lost[m] = true
				r.LostMarkers++
			}
		}
	}
	if r.Window > 0 {
		r.MaxUtilization = float64(r.MaxRealTokens) / float64(r.Window)
	}
	if n := len(r.UtilizationAtTrigger); n > 0 {
		r.MeanUtilizationAtTrigger = sum / float64(n)
	}
	r.OverflowsRecovered = max(r.OverflowsRejected-r.OverflowsSurfaced, 0)
}

// PhasedCounter is a counter whose ground truth switches once, from Early
// to Late (a provider whose tokenizer changes mid-run: the seeds'
// LateTokenRatio).
type PhasedCounter struct {
	Early, Late Counter
	switched    atomic.Bool
}

// Switch makes every later count use Late.
func (p *PhasedCounter) Switch() { p.switched.Store(true) }

// Count implements [Counter]: Early until [PhasedCounter.Switch], then Late.
func (p *PhasedCounter) Count(contents []*genai.Content, config *genai.GenerateContentConfig) int {
	if p.switched.Load() {
		return p.Late.Count(contents, config)
	}
	return p.Early.Count(contents, config)
}

// ScenarioCounter returns the ground truth a driver uses for sc when none
// is given: SeedCounter(sc.TokenRatio), or a [*PhasedCounter] switching to
// SeedCounter(sc.LateTokenRatio) when that is set (the driver switches it at
// sc.UsageFromTurn).
func ScenarioCounter(sc Scenario) (Counter, *PhasedCounter) {
	c := SeedCounter(sc.TokenRatio)
	if sc.LateTokenRatio <= 0 {
		return c, nil
	}
	p := &PhasedCounter{Early: c, Late: SeedCounter(sc.LateTokenRatio)}
	return p, p
}

// Instruction returns the system instruction of sc's agent: a short
// operations prompt, or generated prose of sc.SystemPromptSize bytes.
func Instruction(sc Scenario) string {
	if sc.SystemPromptSize > 0 {
		return Generate(KindProseEnglish, sc.SystemPromptSize, mix(sc.Seed, 0x737973))
	}
	return "You are an operations assistant. Use the tools to investigate and answer precisely."
}

// UserContent builds the user message of turn of sc (plan is
// sc.TurnPlan(turn)) and returns it with its marker.
func UserContent(sc Scenario, turn int, plan TurnPlan) (*genai.Content, string) {
	seed := mix(sc.Seed, int64(turn), 0x75736572)
	marker := Marker(seed)
	head := UserMessage(turn, marker, "")
	text := head + Generate(KindProseEnglish, max(plan.UserTextSize-len(head), 1), seed)
	c := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: text}}}
	for i, size := range plan.Images {
		c.Parts = append(c.Parts, &genai.Part{InlineData: &genai.Blob{MIMEType: "image/png", Data: PNGOfSize(size, mix(seed, int64(i), 0x706e67))}})
	}
	for i, size := range plan.Documents {
		c.Parts = append(c.Parts, &genai.Part{InlineData: &genai.Blob{MIMEType: "application/pdf", Data: PDF(size, mix(seed, int64(i), 0x706466))}})
	}
	return c, marker
}

// stepsPerPlannedStep and extraSteps make the default limit of model calls
// in one turn: room for a guard's retries and recovery calls, far below a
// loop.
const (
	stepsPerPlannedStep = 4
	extraSteps          = 8
)

// StepLimit returns the limit of model calls in a turn of plan: limit when
// positive, else 4 x the plan's steps + 8.
func StepLimit(plan TurnPlan, limit int) int {
	if limit > 0 {
		return limit
	}
	return stepsPerPlannedStep*len(plan.Steps) + extraSteps
}

type pendingStep struct {
	rawContents int
	rawTokens   int
	calls       int
	rawMarkers  []string
}

// Meter is the measurement of a driver, shared by both ADK lines: the
// driver's observer plugin calls [Meter.Raw] with the request ADK built
// (before the guard's plugins), the scripted model calls [Meter.Observe]
// with the record of the request it received, and [Meter.Records] gives
// the records with the Raw*, Effective*, Summarizer*, compaction and marker
// fields filled. A run is sequential (one session), so the request Raw saw
// is the one Observe records next.
type Meter struct {
	counter    Counter
	summarizer *Summarizer

	mu            sync.Mutex
	pending       *pendingStep
	prevRaw       int // number of raw contents at the previous step, -1 before the first
	prevSent      int
	prevRawTokens int
	prevSummary   uint64 // the summary the previous step's request started with
	latestMarker  string
	records       []RequestRecord
}

// NewMeter returns a meter counting with counter; summarizer, when not nil,
// is the guard's summarizer, whose calls mark compaction steps and whose
// inputs say which markers were summarized.
func NewMeter(counter Counter, summarizer *Summarizer) *Meter {
	if counter == nil {
		counter = SeedCounter(1)
	}
	return &Meter{counter: counter, summarizer: summarizer, prevRaw: -1}
}

// SummarizerCalls returns the summarizer's calls so far (0 without one).
func (d *Meter) SummarizerCalls() int {
	if d.summarizer == nil {
		return 0
	}
	return d.summarizer.Calls()
}

// SetLatestUser sets the marker of the user's latest message, which every
// later request must carry.
func (d *Meter) SetLatestUser(marker string) {
	d.mu.Lock()
	d.latestMarker = marker
	d.mu.Unlock()
}

// Raw records the request ADK built for the next model call, before any
// plugin of the guard ran.
func (d *Meter) Raw(contents []*genai.Content, config *genai.GenerateContentConfig) {
	p := &pendingStep{rawContents: len(contents), calls: d.SummarizerCalls()}
	p.rawTokens = d.counter.Count(contents, config)
	if d.summarizer != nil {
		p.rawMarkers = requestMarkers(contents)
	}
	d.mu.Lock()
	d.pending = p
	d.mu.Unlock()
}

// Observe fills the driver's fields of rec, the record of the request the
// model received, keeps a copy and returns its step (index in Records).
func (d *Meter) Observe(rec *RequestRecord) int {
	d.mu.Lock()
	p := d.pending
	d.pending = nil
	prevRaw, prevSent, prevRawTokens, prevSummary := d.prevRaw, d.prevSent, d.prevRawTokens, d.prevSummary
	rec.LatestUser = d.latestMarker
	d.mu.Unlock()

	rec.RawTokens, rec.RawContents, rec.EffectiveInput = -1, -1, -1
	if p != nil {
		rec.RawTokens, rec.RawContents = p.rawTokens, p.rawContents
		rec.CallsSoFar = d.SummarizerCalls()
		rec.SummarizerCalls = rec.CallsSoFar - p.calls
		if prevRaw >= 0 {
			// Counters are additive over contents, so raw(k) - raw(k-1) is
			// the count of raw(k)[len(raw(k-1)):], without rounding drift.
			rec.EffectiveInput = prevSent + p.rawTokens - prevRawTokens
		} else {
			rec.EffectiveInput = p.rawTokens
		}
		// A step compacted when its request starts with a new summary, or,
		// for a compactor whose summaries the meter does not recognize,
		// when the summarizer ran and the request is not the history as
		// built (shorter, or with a summary prepended); a summary prepared
		// in the background during the step leaves the request as built.
		newSummary := rec.Summary != 0 && rec.Summary != prevSummary
		rec.Compaction = newSummary || (rec.SummarizerCalls > 0 && rec.Summary == 0 && rec.Contents != rec.RawContents)
		rec.NonShrinking = rec.Compaction && rec.Tokens >= rec.EffectiveInput
	}
	rec.HasLatestUser = rec.LatestUser == "" || rec.HasMarker(rec.LatestUser)
	if p != nil && d.summarizer != nil {
		rec.RawMarkers = p.rawMarkers
		rec.LostMarkers = d.lostMarkers(rec)
	}

	d.mu.Lock()
	defer d.mu.Unlock()
	if p != nil {
		d.prevRaw, d.prevSent, d.prevRawTokens = p.rawContents, rec.Tokens, p.rawTokens
		d.prevSummary = rec.Summary
	}
	d.records = append(d.records, *rec)
	return len(d.records) - 1
}

// lostMarkers returns the markers of rec's raw request that are neither in
// the request the model received nor in the input of any summarizer call
// made so far: content the guard dropped without summarizing.
func (d *Meter) lostMarkers(rec *RequestRecord) []string {
	var lost []string
	for _, m := range rec.RawMarkers {
		if !rec.HasMarker(m) {
			lost = append(lost, m)
		}
	}
	if len(lost) == 0 {
		return nil
	}
	// A call still measuring its input has no markers yet; it is read
	// again at the next request.
	summarized := map[string]bool{}
	for _, c := range d.summarizer.Records() {
		for _, m := range c.Markers {
			summarized[m] = true
		}
	}
	return slices.DeleteFunc(lost, func(m string) bool { return summarized[m] })
}

// Steps returns the number of requests observed.
func (d *Meter) Steps() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.records)
}

// Records returns a copy of the records observed, in order.
func (d *Meter) Records() []RequestRecord {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.records)
}

// StepTrace is the part of a [RequestRecord] that depends only on the
// scenario and the guard, not on the ADK line that played it nor on the
// run's timing: two drivers playing the same scenario with the same guard
// must produce equal traces.
type StepTrace struct {
	Turn, Step     int
	Tokens         int // ground truth of the request sent
	RawTokens      int // ground truth of the request ADK built
	EffectiveInput int
	Contents       int // contents sent
	RawContents    int // contents ADK built
	Rejected       bool
	UsageReported  int
	Markers        []string
	LostMarkers    []string
	HasLatestUser  bool
	Compaction     bool
}

// Trace returns the [StepTrace] of every request of r, in order.
func (r *Result) Trace() []StepTrace {
	out := make([]StepTrace, len(r.Requests))
	for i, rec := range r.Requests {
		out[i] = StepTrace{
			Turn: rec.Turn, Step: rec.Step, Tokens: rec.Tokens, RawTokens: rec.RawTokens,
			EffectiveInput: rec.EffectiveInput, Contents: rec.Contents, RawContents: rec.RawContents,
			Rejected: rec.Rejected, UsageReported: rec.UsageReported, Markers: rec.Markers,
			LostMarkers: rec.LostMarkers, HasLatestUser: rec.HasLatestUser, Compaction: rec.Compaction,
		}
	}
	return out
}
