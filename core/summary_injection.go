package core

import (
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/pairs"
)

// Summary injection (ARCHITECTURE.md, Summary injection and the watermark):
// where a stored summary's coverage ends in this request (the watermark and
// its fingerprint, or the host's anchor), and the summary in place of what it
// covers.

// injection is the outcome of placing the stored summary into a request.
type injection struct {
	// cut is how many leading raw contents the summary replaced (0: none).
	cut int
	// injected reports whether the summary message was prepended.
	injected bool
	// reason says why no cut was made although a summary exists.
	reason string
	// anchor is the anchor of the cut located without a stored anchor
	// that holds (locateCut), to store; "" when there is nothing to store.
	anchor string
	// staleAnchor reports that the stored anchor did not hold: it is
	// replaced by anchor, or cleared.
	staleAnchor bool
}

// reanchor updates the anchor next stores for the summary still in use
// (the same compaction counter as prev): the anchor of the cut located for
// it when the state had none or the stored one did not hold; a stored
// anchor that did not hold and cannot be replaced is cleared, so later
// calls locate the cut by its position and fingerprint directly.
func (inj injection) reanchor(prev guardState, next *guardState) {
	if next.compactions != prev.compactions || next.anchor != prev.anchor {
		return // a compaction stored its own
	}
	if inj.anchor != "" || inj.staleAnchor {
		next.anchor = inj.anchor
	}
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
	if w <= len(raw) && contentid.Fingerprint(raw[w-1]) == st.fingerprint {
		return w, ""
	}
	best := -1
	for i := range raw {
		if contentid.Fingerprint(raw[i]) != st.fingerprint {
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
// (Coverage.Covered) when it holds: the host's log still has it, and the
// last content it covers is the one the summary's fingerprint names. When
// it does not hold (the log's IDs changed between loads, its events came
// back in another order), the cut degrades to the rule without a host
// (locateWatermark: the stored position and fingerprint), as does state
// written before the host anchored it; with cov, anchor is then the anchor
// of the cut found, "" when the host cannot name it, for the caller to
// store.
func locateCut(raw []*genai.Content, st guardState, fingerprint func(*genai.Content) string, cov Coverage) (w int, reason, anchor string, stale bool) {
	if cov != nil && st.anchor != "" {
		n, ok := cov.Covered(raw, st.anchor)
		if ok && n > 0 && n <= len(raw) && (st.fingerprint == "" || contentid.Fingerprint(raw[n-1]) == st.fingerprint) {
			return n, "", "", false
		}
		stale = true
	}
	w, reason = locateWatermark(raw, st, fingerprint)
	if w > 0 {
		anchor = anchorAt(cov, raw, w)
	}
	return w, reason, anchor, stale
}

// unchangedCut is the cut the previous call used for a summary anchored in
// the host's log, when this request extends that call's: its prefix record
// names the same summary (compactions, estimate) and leading contents (the
// chain). The host's log is then not walked (Coverage.Covered costs a pass
// over the session's events); ok is false otherwise.
func (t *turn) unchangedCut() (cut int, ok bool) {
	if t.req.Coverage == nil || t.prev.anchor == "" || t.storedPrefix == "" {
		return 0, false
	}
	rec, ok := decodePrefixRecord(t.storedPrefix)
	if !ok || !rec.injected || rec.compactions != t.prev.compactions || rec.total != t.prev.lastEstimate ||
		rec.cut <= 0 || rec.cut > rec.contents || rec.contents > len(t.Raw) ||
		rec.chain != t.chain.at(t.Raw, rec.contents) {
		return 0, false
	}
	return rec.cut, true
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

// injectSummary replaces the contents the stored summary covers by the
// summary message (ARCHITECTURE.md, Summary injection and the watermark);
// without a match it cuts nothing. When the summary covers the user's
// current request, the message carries its attachments, and quotes the
// request itself if the stored continuation does not (stale or corrupt
// state), so the request is never dropped. It returns the injection and the
// contents to send: t.Raw itself when nothing is cut.
func injectSummary(t *turn) (injection, []*genai.Content) {
	if t.prev.summary == "" {
		return injection{}, t.Raw
	}
	w, ok := t.unchangedCut()
	var reason, anchor string
	var stale bool
	if !ok {
		w, reason, anchor, stale = locateCut(t.Raw, t.prev, t.Est.fingerprint, t.req.Coverage)
	}
	if stale {
		t.log().Debug("contextguard: the summary's anchor does not hold in this request; locating it by position and fingerprint",
			"anchor", t.prev.anchor, "watermark", t.prev.watermark, "found", w)
	}
	if w == 0 {
		t.log().Warn("contextguard: stored summary not applied; sending the contents as they are",
			"reason", reason, "watermark", t.prev.watermark, "anchor", t.prev.anchor, "contents", len(t.Raw))
		return injection{reason: reason, staleAnchor: stale}, t.Raw
	}
	start := pairs.SafeStart(t.Raw, w)
	request := t.prev.userRequest
	v := viewOf(t)
	cur := v.coveredRequest(start)
	if cur != nil && !quotesRequest(request, cur) {
		t.log().Debug("contextguard: the stored continuation does not quote the user's latest message; quoting it",
			"watermark", w)
		request = boundContinuation(t.measure, t.lim.Threshold, continuationText(cur))
	}
	out := make([]*genai.Content, 0, len(t.Raw)-start+1)
	out = append(out, t.sess.summary.message(t.prev.summary, request, t.recall, cur))
	out = append(out, t.Raw[start:]...)
	return injection{cut: start, injected: true, anchor: anchor, staleAnchor: stale}, out
}
