package core

import (
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/pairs"
	"github.com/adk-contextguard/contextguard/core/internal/state"
)

// injection is the outcome of placing the stored summary into a request
// (ARCHITECTURE.md, Summary injection and the watermark).
type injection struct {
	cut      int    // leading raw contents the summary replaced
	injected bool   // the summary message was prepended
	reason   string // why no cut was made although a summary exists
	// anchor is the cut's anchor to store when the stored one was missing
	// or did not hold (staleAnchor: replaced by anchor, or cleared).
	anchor      string
	staleAnchor bool
}

// reanchor stores inj's anchor for the summary still in use; a stale one
// that cannot be replaced is cleared, so later calls locate the cut by
// position and fingerprint.
func (inj injection) reanchor(prev state.Agent, next *state.Agent) {
	if next.Compactions != prev.Compactions || next.Anchor != prev.Anchor {
		return // a compaction stored its own
	}
	if inj.anchor != "" || inj.staleAnchor {
		next.Anchor = inj.anchor
	}
}

// locateWatermark finds where the stored summary ends in raw: at the stored
// watermark when the fingerprint matches there, else at the nearest
// matching content; without a match nothing is cut. The earlier guard's
// state has no fingerprint: its watermark is trusted within the contents.
func locateWatermark(raw []*genai.Content, st state.Agent) (int, string) {
	w := st.Watermark
	if w <= 0 {
		return 0, "summary without watermark"
	}
	if st.Fingerprint == "" {
		if w > len(raw) {
			return 0, "watermark beyond the contents"
		}
		return w, ""
	}
	if w <= len(raw) && contentid.Fingerprint(raw[w-1]) == st.Fingerprint {
		return w, ""
	}
	best := -1
	for i := range raw {
		if contentid.Fingerprint(raw[i]) != st.Fingerprint {
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

// locateCut finds where the stored summary ends in raw: at the host's
// anchor (cov) when it holds and the fingerprint agrees, else by
// locateWatermark, returning then the cut's anchor for the caller to store.
func locateCut(raw []*genai.Content, st state.Agent, cov Coverage) (w int, reason, anchor string, stale bool) {
	if cov != nil && st.Anchor != "" {
		n, ok := cov.Covered(raw, st.Anchor)
		if ok && n > 0 && n <= len(raw) && (st.Fingerprint == "" || contentid.Fingerprint(raw[n-1]) == st.Fingerprint) {
			return n, "", "", false
		}
		stale = true
	}
	w, reason = locateWatermark(raw, st)
	if w > 0 {
		anchor = anchorAt(cov, raw, w)
	}
	return w, reason, anchor, stale
}

// unchangedCut is the previous call's cut for an anchored summary when its
// prefix record shows this request extends it, sparing Coverage.Covered's
// pass over the session's events.
func (t *turn) unchangedCut() (cut int, ok bool) {
	if t.req.Coverage == nil || t.prev.Anchor == "" || t.storedPrefix == "" {
		return 0, false
	}
	rec, ok := decodePrefixRecord(t.storedPrefix)
	if !ok || !rec.injected || rec.compactions != t.prev.Compactions || rec.total != t.prev.LastEstimate ||
		rec.cut <= 0 || rec.cut > rec.contents || rec.contents > len(t.Raw) ||
		rec.chain != t.chain.At(t.Raw, rec.contents) {
		return 0, false
	}
	return rec.cut, true
}

// anchorAt is the host's anchor of raw[n-1], "" without one.
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

// injectSummary replaces the contents the stored summary covers by the
// summary message; without a match it cuts nothing. A covered current
// request is carried with its attachments and quoted when the stored
// continuation does not, so it is never dropped.
func injectSummary(t *turn) (injection, []*genai.Content) {
	if t.prev.Summary == "" {
		return injection{}, t.Raw
	}
	w, ok := t.unchangedCut()
	var reason, anchor string
	var stale bool
	if !ok {
		w, reason, anchor, stale = locateCut(t.Raw, t.prev, t.req.Coverage)
	}
	if stale {
		t.log().Debug("contextguard: the summary's anchor does not hold in this request; locating it by position and fingerprint",
			"anchor", t.prev.Anchor, "watermark", t.prev.Watermark, "found", w)
	}
	if w == 0 {
		t.log().Warn("contextguard: stored summary not applied; sending the contents as they are",
			"reason", reason, "watermark", t.prev.Watermark, "anchor", t.prev.Anchor, "contents", len(t.Raw))
		return injection{reason: reason, staleAnchor: stale}, t.Raw
	}
	start := pairs.SafeStart(t.Raw, w)
	request := t.prev.UserRequest
	v := viewOf(t)
	cur := v.coveredRequest(start)
	if cur != nil && !quotesRequest(request, cur) {
		t.log().Debug("contextguard: the stored continuation does not quote the user's latest message; quoting it",
			"watermark", w)
		request = boundContinuation(t.measure, t.lim.Threshold, continuationText(cur))
	}
	out := make([]*genai.Content, 0, len(t.Raw)-start+1)
	out = append(out, t.sess.summary.message(t.prev.Summary, request, t.recall, cur))
	out = append(out, t.Raw[start:]...)
	return injection{cut: start, injected: true, anchor: anchor, staleAnchor: stale}, out
}
