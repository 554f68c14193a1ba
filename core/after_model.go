package core

import (
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/state"
)

// afterResponse is the engine's part of AfterModelCallback: it records the
// provider's counts, handles a response cut at the output limit, and starts
// preparing the next summary while the response's tools run. It returns
// the content that replaces the response's, nil for none.
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

// recordCached keeps the cached-token count in state for Usage.
func recordCached(sio state.IO, st State, n int) {
	if st == nil {
		return
	}
	sio.Set(st, state.KeyCachedTokens, sio.Num(st, state.KeyCachedTokens), n)
}
