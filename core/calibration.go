package core

import (
	"log/slog"
	"math"
	"sync"

	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/window"

	"google.golang.org/genai"
)

// Calibration (ARCHITECTURE.md, "Trusting the provider's counts"): the raw
// estimate is scaled by what the provider reported for earlier requests of
// the session, each report believed only for what believing it risks
// (report.judge).

const (
	// maxCorrection caps the factor real/estimate, so one odd turn cannot
	// distort every later estimate. A report above it inside the window is
	// still the request's floor (count): a provider charging images by
	// their encoded size reports 10-20x the estimate.
	maxCorrection = 5.0
	// minPlausibleRatio is the smallest ratio of a report to the guard's
	// estimate that is believed: the estimator is never off by 5x low on a
	// whole request (its worst content kind is within 12% at p90), so a
	// report below a fifth of the estimate is a broken adapter.
	minPlausibleRatio = 1 / maxCorrection
	// maxRatioJump is how far (a factor, up or down) a report's ratio may
	// move from the learned one and be believed at once; a larger jump waits
	// for the next report, since a glitch or running total does not repeat.
	maxRatioJump = 1.5
	// ratioConfirmTolerance is how close a second report's ratio must be to
	// a suspect one to confirm it.
	ratioConfirmTolerance = 0.10
	// ratioScale stores ratios in session state as integers (per mille),
	// since state numbers decode as integers.
	ratioScale = 1000
)

// overflowStep is how much an overflow error that states no usable count
// raises the session's learned ratio (README, "How it decides", step 4): the
// ratio the request was judged with was too low by an unknown amount. From
// the default 1.10 it gives 1.375, enough with a fifth of the window as
// buffer for a provider counting up to 1.7x the estimate, while one counting
// close to the estimate loses at most a quarter of its room.
const overflowStep = 1.25

// learnFromOverflow returns the provider ratio (per mille) a session learns
// when the provider rejects as too long a request estimated at estimate raw
// tokens; learned is the ratio it had (0: none). A stated count (real > 0)
// calibrates as a usage report would, when believable; it is not judged by
// the stated limit, which may count max_tokens too (Anthropic). Otherwise
// the ratio the request was judged with rises by one overflowStep, whatever
// the error says: an odd error (a quota worded as a token limit) must not
// take the session to maxCorrection at once, while a real overflow repeats
// and rises a step each time. Without an estimate, learned is returned.
func learnFromOverflow(learned int, defaultFactor float64, real, estimate int) int {
	if estimate <= 0 {
		return learned
	}
	if real > 0 {
		if f := float64(real) / float64(estimate); f >= minPlausibleRatio && f <= maxCorrection {
			return ratioPerMille(f)
		}
	}
	f := max(defaultFactor, float64(learned)/ratioScale) * overflowStep
	return ratioPerMille(min(f, maxCorrection))
}

// ratioPerMille stores a ratio in session state's integer form.
func ratioPerMille(f float64) int { return int(math.Round(f * ratioScale)) }

// calibration turns raw estimates into calibrated counts: the ratio between
// the provider's last real count and the guard's estimate of that same
// request, clamped to [1, maxCorrection]; without a real count, the larger
// of the estimator's default factor and the ratio the session learned from
// earlier reports.
type calibration struct {
	factor float64
	real   int // last real prompt tokens, 0 if unknown
}

func newCalibration(st guardState, e tokenEstimator) calibration {
	if st.realTokens > 0 && st.lastEstimate > 0 {
		f := float64(st.realTokens) / float64(st.lastEstimate)
		return calibration{factor: clampFactor(f), real: st.realTokens}
	}
	f := e.defaultFactor()
	if st.providerRatio > 0 {
		f = max(f, clampFactor(float64(st.providerRatio)/ratioScale))
	}
	return calibration{factor: f}
}

func clampFactor(f float64) float64 { return math.Min(math.Max(f, 1.0), maxCorrection) }

// scale is the calibrated size of a piece estimated at n raw tokens. It is
// used for pieces (summaries, transcripts), where the last real count of the
// whole request says nothing.
func (c calibration) scale(n int) int { return sat.Scale(n, c.factor) }

// unscale is the raw size of a piece whose calibrated size is n: the
// length to ask of a writer (the summarizer) so that what it writes weighs n
// once calibrated. A summarizer counts its words and tokens as real
// tokenizers do, which the raw estimate follows; the factor is how much more
// the agent's provider charges for the same text.
func (c calibration) unscale(n int) int {
	if c.factor <= 1 {
		return n
	}
	return int(float64(n) / c.factor)
}

// count is the calibrated size of a whole request estimated at n raw tokens:
// never below the provider's last real count.
func (c calibration) count(n int) int { return max(c.real, c.scale(n)) }

// report is one prompt-token count a provider returned for a request the
// guard let through, with what the guard knew of that request.
type report struct {
	real     int // the provider's count
	estimate int // the guard's raw estimate of the request, 0 if unknown
	// hardLimit is the largest request the guard may have sent; 0 if
	// unknown.
	hardLimit int
	// learned is the session's ratio from earlier believed reports, per
	// mille; 0 if none.
	learned int
	// suspect is an earlier report's ratio that jumped and waits for
	// confirmation, per mille; 0 if none.
	suspect int
}

// verdict is what a report is believed for (ARCHITECTURE.md, "Trusting the
// provider's counts"). A report has two uses that risk different things:
// the call's count, which the next call is counted at least at and
// calibrated with, and the session's learned ratio, which outlives the call
// and every compaction.
type verdict struct {
	// count: the report is the call's count.
	count bool
	// learn: the session learns ratio.
	learn bool
	// ratio is the report's ratio to the estimate, per mille, bounded to
	// twice maxCorrection; 0 without an estimate.
	ratio int
	// suspect is the ratio kept for the next report to confirm, per mille
	// (0: none).
	suspect int
	// reason says why the report is not the call's count, or why its ratio
	// is not learned yet.
	reason string
}

// judge decides what a report is believed for.
//
// A count that is not positive, beyond the window, or under a fifth of the
// estimate is believed for nothing. Otherwise the report's ratio is
// compared with the session's learned ratio:
//   - within maxRatioJump of it, or confirming a suspect ratio (the
//     previous report's, within ratioConfirmTolerance): believed for both
//     uses;
//   - higher by more: the call's count, always, since a count above the
//     guard's calibrated estimate and inside the window can only make the
//     guard compact earlier, and at most once (the next call is counted at
//     least at it; a compaction clears it). Its ratio waits for the next
//     report to confirm it before the session learns it;
//   - lower by more: believed for nothing until confirmed, since it would
//     let the guard send more than the provider was seen to take.
//
// The learned ratio is held back longest: it calibrates every later
// request, and one learned from a count that does not repeat (a running
// total, a glitch) could put every request's irreducible part over the
// trigger for good; a real change of content repeats and is learned then.
func (r report) judge() verdict {
	switch {
	case r.real <= 0:
		return verdict{reason: "the count is not positive"}
	case r.hardLimit > 0 && r.real > r.hardLimit:
		return verdict{reason: "the count exceeds the window, which a call that succeeded cannot have sent"}
	case r.estimate <= 0:
		return verdict{count: true}
	}
	f := float64(r.real) / float64(r.estimate)
	ratio := int(math.Round(min(f, maxCorrection*2) * ratioScale))
	learned := float64(r.learned) / ratioScale
	switch {
	case f < minPlausibleRatio:
		return verdict{reason: "the count is under a fifth of the guard's estimate"}
	case r.learned <= 0 || within(f, learned, maxRatioJump):
		return verdict{count: true, learn: true, ratio: ratio}
	case r.suspect > 0 && math.Abs(f/(float64(r.suspect)/ratioScale)-1) <= ratioConfirmTolerance:
		return verdict{count: true, learn: true, ratio: ratio}
	case f > learned:
		return verdict{count: true, ratio: ratio, suspect: ratio,
			reason: "the count's ratio to the estimate jumped above the session's usual ratio; the next call is counted with it, and the session learns it once the next count confirms it"}
	}
	return verdict{ratio: ratio, suspect: ratio,
		reason: "the count's ratio to the estimate dropped from the session's usual ratio; waiting for the next count to confirm it"}
}

// within reports whether a and b differ by at most a factor of f.
func within(a, b, f float64) bool { return a <= b*f && b <= a*f }

// reports records the provider's prompt-token counts, logging those not
// believed: a warning the first time for an agent, debug after.
type reports struct {
	log    *slog.Logger
	warned sync.Map // agent name -> bool
}

// recordReport records the provider's prompt-token count of the request the
// guard let through in this call, for what it is believed (report.judge): as
// the call's count, and as the session's learned ratio. A count not believed
// clears the call's count, so the next call calibrates with the learned one.
func (r *reports) recordReport(c Call, sio stateIO, st State, real int) {
	prev := guardState{
		providerRatio: sio.num(st, keyProviderRatio),
		suspectRatio:  sio.num(st, keySuspectRatio),
		window:        sio.num(st, keyWindow),
	}
	rep := report{real: real, estimate: sio.num(st, keyLastEstimate), learned: prev.providerRatio, suspect: prev.suspectRatio}
	if prev.window > 0 {
		rep.hardLimit = window.New(prev.window).HardLimit()
	}
	v := rep.judge()
	next := prev
	next.suspectRatio = v.suspect
	if v.learn && v.ratio > 0 {
		next.providerRatio = v.ratio
	}
	if v.count {
		sio.set(st, keyRealTokens, nil, real)
	} else {
		sio.set(st, keyRealTokens, nil, 0)
	}
	if v.reason != "" {
		level := slog.LevelDebug
		if _, seen := r.warned.LoadOrStore(sio.agent, true); !seen {
			level = slog.LevelWarn
		}
		msg := "contextguard: the provider's prompt-token count is not believable; not calibrating with it"
		if v.count {
			msg = "contextguard: the provider's prompt-token count jumped; calibrating the next call with it, not the session yet"
		}
		r.log.Log(c, level, msg,
			"agent", sio.agent, "session", c.SessionID(), "real_tokens", real, "estimate", rep.estimate,
			"window", prev.window, "reason", v.reason)
	}
	sio.set(st, keyProviderRatio, prev.providerRatio, next.providerRatio)
	sio.set(st, keySuspectRatio, prev.suspectRatio, next.suspectRatio)
}

// measure is how a call weighs what it builds: the contents as ADK built
// them, the session's estimator, the call's calibration, and the raw
// estimate of what every request carries besides its contents. The steps
// that only count and cut (excerpts, transcript pieces, the quoted
// request, todo lines) take it, not the whole call's state (turn).
type measure struct {
	raw []*genai.Content
	est cachedEstimator
	cal calibration
	// fixed is the raw estimate of the system instruction and the tools.
	fixed int
}

// weigh is the raw estimate of the request with contents cs.
func (m measure) weigh(cs []*genai.Content) int { return sat.Add(contentsTokens(m.est, cs), m.fixed) }

// text is the calibrated size of s.
func (m measure) text(s string) int { return m.cal.scale(m.est.text(s)) }
