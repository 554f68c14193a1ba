package core

import "google.golang.org/genai"

// After the model call: the provider's prompt-token count recorded for
// calibration, and a response cut at the output limit handled.

// afterResponse is the engine's part of AfterModelCallback, for a final
// response of an agent the guard guards: it records the provider's
// prompt-token count when believable (calibration.go), handles a response
// cut at the output limit near the window unless the session is switched
// off (output_limit.go), and, when the response asks for tool calls,
// starts preparing the next compaction's summary while they run
// (prepared_start.go). It returns the content that replaces the
// response's, nil to let the response through untouched.
func (g *Guard) afterResponse(c Call, cfg *Agent, st State, resp *Response) *genai.Content {
	sio := cfg.stateIO(g.log)
	if n := resp.promptTokens(); n != 0 {
		g.recordReport(c, sio, st, n)
		recordCached(sio, st, resp.cachedTokens(n))
	}
	if resp.cutAtOutputLimit() && !sessionDisabled(st, g.log) {
		return cutAtOutputLimit(g.log, c, cfg, sio, st, resp)
	}
	if resp.asksForTools() {
		g.startPrepared(c, cfg, st)
	}
	return nil
}

// recordCached keeps the provider's cached-token count of the last request
// in state, for Usage, written only when it changed.
func recordCached(sio stateIO, st State, n int) {
	if st == nil {
		return
	}
	sio.set(st, keyCachedTokens, sio.num(st, keyCachedTokens), n)
}
