package core

import (
	"log/slog"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/calib"
	"github.com/adk-contextguard/contextguard/core/internal/estimate"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/state"
)

// cutCallNote replaces the function calls of a response cut at the output
// limit near the window, whose arguments may be cut short.
const cutCallNote = "[contextguard: my response was cut at the output-token limit before it was complete, so the tool call it started was not run. The conversation will be compacted; ask me to continue.]"

// cutAtOutputLimit handles a response stopped at the output limit near the
// window: the next call compacts first, and its calls are replaced by
// cutCallNote in the content returned (nil when there are none).
func cutAtOutputLimit(log *slog.Logger, c Call, cfg *Agent, sio state.IO, st State, resp *Response) *genai.Content {
	prev := state.Agent{
		RealTokens:    sio.Num(st, state.KeyRealTokens),
		LastEstimate:  sio.Num(st, state.KeyLastEstimate),
		ProviderRatio: sio.Num(st, state.KeyProviderRatio),
		Window:        sio.Num(st, state.KeyWindow),
		CompactNext:   sio.Num(st, state.KeyCompactNext),
		MaxOutput:     sio.Num(st, state.KeyMaxOutput),
	}
	prompt, output, threshold, near := outputNearWindow(cfg, prev, resp)
	if !near {
		return nil
	}
	sio.Set(st, state.KeyCompactNext, prev.CompactNext, 1)
	var parts []*genai.Part
	calls := 0
	if resp.Content != nil {
		for _, p := range resp.Content.Parts {
			switch {
			case p == nil:
			case p.FunctionCall != nil:
				calls++
			default:
				parts = append(parts, p)
			}
		}
	}
	log.Warn("contextguard: the response stopped at the output limit near the window; the next call compacts first",
		"agent", cfg.name, "session", c.SessionID(), "real_tokens", prompt, "output_tokens", output,
		"threshold", threshold, "window", prev.Window, "calls_dropped", calls)
	if calls == 0 {
		return nil
	}
	return &genai.Content{Role: genai.RoleModel, Parts: append(parts, &genai.Part{Text: cutCallNote})}
}

// maxOutputOvershoot: adapters' output counts differ by a little, never by
// twice MaxOutputTokens; more is a broken adapter's (a running total, a
// sentinel), unknown.
const maxOutputOvershoot = 2

// outputNearWindow reports whether the prompt plus the output reaches the
// trigger, so the output was likely cut for want of room. The prompt is the
// provider's believed count, else the estimate at the learned ratio; the
// output the plausible count, else the buffer.
func outputNearWindow(cfg *Agent, st state.Agent, resp *Response) (prompt, output, threshold int, near bool) {
	if st.Window <= 0 {
		return 0, 0, 0, false
	}
	lim, _ := cfg.limitsFor(st.Window)
	reported := 0
	if u := resp.UsageMetadata; u != nil {
		reported = int(u.PromptTokenCount)
		output = plausibleOutput(int(u.CandidatesTokenCount), st)
	}
	switch {
	case reported > 0 && reported == st.RealTokens:
		prompt = reported
	default:
		prompt = sat.Scale(st.LastEstimate, max(estimate.DefaultCorrection, float64(st.ProviderRatio)/calib.RatioScale))
	}
	if output <= 0 {
		output = lim.Buffer
	}
	return prompt, output, lim.Threshold, sat.Add(prompt, output) >= lim.Threshold
}

// plausibleOutput is n, or 0 (unknown) when no call could have produced it.
func plausibleOutput(n int, st state.Agent) int {
	switch {
	case n <= 0, n > st.Window:
		return 0
	case st.MaxOutput > 0 && n > sat.Scale(st.MaxOutput, maxOutputOvershoot):
		return 0
	}
	return n
}
