package contextguard

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/platform"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core"
)

// The ADK v1 adapter (ARCHITECTURE.md, Packages and modules): the plugin,
// its callbacks' entry points, which pass ADK's values to the engine (module
// core) through its seams (core.Call, core.State, core.Request, ...), the
// conversions of requests and responses, and the recovery model's call.

// Plugin returns the guard as an ADK plugin, or every configuration error
// recorded by New and Add, joined.
func (g *ContextGuard) Plugin() (*plugin.Plugin, error) {
	if err := g.Err(); err != nil {
		return nil, err
	}
	return plugin.New(plugin.Config{
		Name:                 PluginName,
		BeforeModelCallback:  g.beforeModel,
		AfterModelCallback:   g.afterModel,
		OnModelErrorCallback: g.onModelError,
		BeforeRunCallback:    g.beforeRun,
		AfterRunCallback:     g.afterRun,
	})
}

// beforeRun is the plugin's BeforeRunCallback: it has the engine warn when
// no agent of the run is guarded (core.Guard.CheckRun), which a misspelt
// name given to Add would otherwise leave to one Info line per agent.
func (g *ContextGuard) beforeRun(ictx agent.InvocationContext) (*genai.Content, error) {
	if ictx != nil && ictx.Agent() != nil {
		g.engine().CheckRun(agentTree(ictx.Agent()))
	}
	return nil, nil
}

// agentTree is the names of a and of every agent below it, a's first, each
// once.
func agentTree(a agent.Agent) []string {
	var names []string
	seen := map[string]bool{}
	stack := []agent.Agent{a}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if core.IsNil(cur) || seen[cur.Name()] {
			continue
		}
		seen[cur.Name()] = true
		names = append(names, cur.Name())
		subs := cur.SubAgents()
		for i := len(subs) - 1; i >= 0; i-- {
			stack = append(stack, subs[i])
		}
	}
	return names
}

// PluginConfig returns a runner.PluginConfig holding the guard's plugin. Like
// Go's Must functions it panics when the configuration is invalid, so a
// mistake stops the program at start-up rather than leaving agents unguarded.
func (g *ContextGuard) PluginConfig() runner.PluginConfig {
	p, err := g.Plugin()
	if err != nil {
		panic(err)
	}
	return runner.PluginConfig{Plugins: []*plugin.Plugin{p}}
}

// beforeModel is the plugin's BeforeModelCallback (ARCHITECTURE.md, One
// model call): it finds the agent's configuration and has the engine guard
// the request (core.Guard.BeforeModel), which in a session switched off only
// applies what earlier compactions stored.
func (g *ContextGuard) beforeModel(cctx agent.CallbackContext, req *model.LLMRequest) (*model.LLMResponse, error) {
	if cctx == nil || req == nil {
		if req == nil {
			g.engine().Logger().Warn("contextguard: BeforeModelCallback called without a request; nothing to guard")
		}
		return nil, nil
	}
	cfg := g.engine().AgentForCall(cctx.AgentName())
	if cfg == nil {
		return nil, nil
	}
	ro := cctx.ReadonlyState()
	if len(req.Contents) == 0 {
		g.engine().Logger().Debug("contextguard: the request has no contents", "agent", cfg.Name(), "session", cctx.SessionID())
	}
	err := g.engine().BeforeModel(cctx, cctx.State(), ro, cfg, fromADK(req), func(contents []*genai.Content) {
		toADK(req, contents)
	})
	return nil, err
}

// afterModel is the plugin's AfterModelCallback: for a final response that
// reports a prompt-token count or stopped at the output limit, of an agent
// the guard guards, the engine records the count and, in a session not
// switched off, handles the cut (core.Guard.AfterModel).
func (g *ContextGuard) afterModel(cctx agent.CallbackContext, resp *model.LLMResponse, respErr error) (*model.LLMResponse, error) {
	if cctx == nil || resp == nil || respErr != nil || resp.Partial {
		return nil, nil
	}
	r := core.Response{Content: resp.Content, UsageMetadata: resp.UsageMetadata, FinishReason: resp.FinishReason}
	if !r.NeedsGuard() {
		return nil, nil
	}
	cfg := g.engine().Agent(cctx.AgentName())
	if cfg == nil {
		return nil, nil
	}
	st := cctx.State()
	if st == nil {
		return nil, nil
	}
	content := g.engine().AfterModel(cctx, cfg, st, r)
	if content == nil {
		return nil, nil
	}
	out := *resp
	out.Content = content
	return &out, nil
}

// onModelError is the plugin's OnModelErrorCallback (ARCHITECTURE.md,
// Recovery). Errors that are not context overflows, and agents that were
// not added, pass through untouched. The engine handles an overflow
// (core.Guard.RecoverOverflow); when it returns a compacted request, the agent's
// recovery model answers it in place of the error.
func (g *ContextGuard) onModelError(cctx agent.CallbackContext, req *model.LLMRequest, modelErr error) (*model.LLMResponse, error) {
	if cctx == nil || modelErr == nil {
		return nil, nil
	}
	cfg := g.engine().Agent(cctx.AgentName())
	if cfg == nil || g.engine().SwitchedOff(cctx.ReadonlyState()) {
		return nil, nil
	}
	ov, ok := AsContextOverflow(modelErr)
	if !ok {
		return nil, nil
	}
	var r *core.Request
	if req != nil {
		rr := fromADK(req)
		r = &rr
	}
	st := cctx.State()
	rec, err := g.engine().RecoverOverflow(cctx, st, cctx.ReadonlyState(), cfg, r, ov, modelErr)
	if rec == nil {
		return nil, err
	}
	// The recovery model runs with the session released: it may call the
	// guard for the same session.
	llm, _ := cfg.RecoveryModel().(model.LLM)
	out := *req
	toADK(&out, rec.Contents())
	resp, err := callRecoveryModel(cctx, llm, &out)
	if err != nil {
		return nil, g.engine().RecoveryFailed(cctx, st, cfg, rec, err)
	}
	rec.Recovered()
	return resp, nil
}

// afterRun is the plugin's AfterRunCallback (ARCHITECTURE.md, Compaction
// between turns): once a run's last event has been delivered, the engine
// compacts a session whose next turn would probably reach the trigger
// (core.Guard.AfterRun), from the run's last guarded request and the
// session's last contents as ADK puts them into the next request. ADK's
// runner calls it before the run's iterator returns, so a caller ranging
// over the run's events leaves its loop once the compaction is done.
func (g *ContextGuard) afterRun(ic agent.InvocationContext) {
	if ic == nil {
		return
	}
	sess := ic.Session()
	if sess == nil {
		return
	}
	end := core.RunEnd{State: sess.State()}
	end.FinalAuthor, end.Final, end.Before = lastContents(sess.Events())
	g.engine().AfterRun(runCall{InvocationContext: ic, sess: sess}, end)
}

// runCall is a run that ended as the engine sees a call (core.Call): the
// invocation's context, its user content, and the session's IDs.
type runCall struct {
	agent.InvocationContext
	sess session.Session
}

func (c runCall) AppName() string   { return c.sess.AppName() }
func (c runCall) UserID() string    { return c.sess.UserID() }
func (c runCall) SessionID() string { return c.sess.ID() }

// lastContents returns the session's last two contents as ADK puts them
// into a model request (requestContent), and the last one's author; nil
// for what the session does not hold. Events without content (state
// deltas, the guard's own) are skipped, as ADK skips them.
func lastContents(evs session.Events) (author string, final, before *genai.Content) {
	if evs == nil {
		return "", nil, nil
	}
	for i := evs.Len() - 1; i >= 0 && before == nil; i-- {
		e := evs.At(i)
		if e == nil || e.Partial {
			continue
		}
		c := requestContent(e.Content)
		switch {
		case c == nil:
		case final == nil:
			author, final = e.Author, c
		default:
			before = c
		}
	}
	return author, final, before
}

// requestContent is an event's content as ADK puts it into a model request:
// without the parts that hold nothing (ADK drops them), with the function
// call IDs ADK generated cleared (asRequested); nil when nothing is left
// or the content has no role. c is copied only when a part is dropped.
func requestContent(c *genai.Content) *genai.Content {
	if c == nil || c.Role == "" {
		return nil
	}
	var parts []*genai.Part
	for i, p := range c.Parts {
		empty := p == nil || reflect.ValueOf(*p).IsZero()
		if empty && parts == nil {
			parts = append(make([]*genai.Part, 0, len(c.Parts)), c.Parts[:i]...)
		}
		if !empty && parts != nil {
			parts = append(parts, p)
		}
	}
	if parts != nil {
		c = &genai.Content{Role: c.Role, Parts: parts}
	}
	if len(c.Parts) == 0 {
		return nil
	}
	return asRequested(c)
}

// fromADK is the engine's view of ADK's request.
func fromADK(req *model.LLMRequest) core.Request {
	return core.Request{Model: req.Model, Contents: req.Contents, Config: req.Config, Origin: req}
}

// toADK writes the contents the engine decided into ADK's request: the one
// place where the guard changes what ADK sends.
func toADK(dst *model.LLMRequest, contents []*genai.Content) {
	dst.Contents = contents
}

// adkHost is what the engine asks of ADK (core.WithHost, passed first by
// New): a state read's "no such key" is session.ErrStateKeyNotExist, which
// the engine treats as absent without a warning, and the time of a call is
// the time provider ADK honours (platform.Now).
var adkHost = core.Host{
	MissingKey: func(err error) bool { return errors.Is(err, session.ErrStateKeyNotExist) },
	Now:        func(ctx context.Context) time.Time { return platform.Now(ctx) },
}

// callRecoveryModel sends req to llm and returns its final response. The
// wait is bounded by ctx even when the model ignores it (core.CallBounded): once
// the call's context is done the guard stops waiting and returns an error.
// A panic of the model is turned into an error.
func callRecoveryModel(ctx context.Context, llm model.LLM, req *model.LLMRequest) (*model.LLMResponse, error) {
	resp, err := core.CallBounded(ctx, func(ctx context.Context) (*model.LLMResponse, error) {
		return finalResponse(ctx, llm, req)
	})
	var p *core.PanicError
	switch {
	case errors.As(err, &p):
		return nil, fmt.Errorf("contextguard: recovery model %q panicked: %v\n%s", llm.Name(), p.Value, p.Stack)
	case err != nil:
		return nil, fmt.Errorf("contextguard: recovery model %q: %w", llm.Name(), err)
	}
	return resp, nil
}

// finalResponse sends req to llm and returns its last non-partial response.
func finalResponse(ctx context.Context, llm model.LLM, req *model.LLMRequest) (resp *model.LLMResponse, err error) {
	for r, e := range llm.GenerateContent(ctx, req, false) {
		if e != nil {
			return nil, e
		}
		if r != nil && !r.Partial {
			resp = r
		}
	}
	if resp == nil {
		return nil, errors.New("returned no response")
	}
	return resp, nil
}

// adkCallIDPrefix starts the function call IDs ADK generates itself; ADK
// clears them in the requests it builds.
const adkCallIDPrefix = "adk-"

// asRequested is an event's content as ADK puts it into a request: the
// function call and response IDs ADK generated are cleared (the content is
// copied only then), so the recall tool finds the stored summary's cut by
// the fingerprint of a request's content.
func asRequested(c *genai.Content) *genai.Content {
	var parts []*genai.Part
	for i, p := range c.Parts {
		if p == nil {
			continue
		}
		switch {
		case p.FunctionCall != nil && strings.HasPrefix(p.FunctionCall.ID, adkCallIDPrefix):
			fc := *p.FunctionCall
			fc.ID = ""
			np := *p
			np.FunctionCall = &fc
			parts = clonedParts(parts, c.Parts)
			parts[i] = &np
		case p.FunctionResponse != nil && strings.HasPrefix(p.FunctionResponse.ID, adkCallIDPrefix):
			fr := *p.FunctionResponse
			fr.ID = ""
			np := *p
			np.FunctionResponse = &fr
			parts = clonedParts(parts, c.Parts)
			parts[i] = &np
		}
	}
	if parts == nil {
		return c
	}
	return &genai.Content{Role: c.Role, Parts: parts}
}

// clonedParts is parts, or a copy of src when parts is still nil.
func clonedParts(parts, src []*genai.Part) []*genai.Part {
	if parts != nil {
		return parts
	}
	return append([]*genai.Part(nil), src...)
}

// recallHistory is the session's contents as the tool's agent sees them, for
// the recall tool (ARCHITECTURE.md, Recall): the session's events read from
// svc, in order, those of the call's branch or an ancestor's, each with
// content. This ADK line keeps no isolation scope: the scope is the branch.
func recallHistory(ctx agent.ReadonlyContext, svc session.Service) ([]*genai.Content, core.RecallScope, error) {
	scope := core.RecallScope{Branch: ctx.Branch()}
	resp, err := svc.Get(ctx, &session.GetRequest{AppName: ctx.AppName(), UserID: ctx.UserID(), SessionID: ctx.SessionID()})
	if err != nil {
		return nil, scope, fmt.Errorf("contextguard: recall_context: reading session %q: %w", ctx.SessionID(), err)
	}
	if resp == nil || resp.Session == nil || resp.Session.Events() == nil {
		return nil, scope, nil
	}
	evs := resp.Session.Events()
	history := make([]*genai.Content, 0, evs.Len())
	for e := range evs.All() {
		if e == nil || e.Content == nil || len(e.Content.Parts) == 0 || !visibleFrom(scope.Branch, e.Branch) {
			continue
		}
		history = append(history, asRequested(e.Content))
	}
	return history, scope, nil
}

// visibleFrom reports whether an event of branch eventBranch is in the
// history of branch: either is empty, they are equal, or the event's is an
// ancestor (ADK's branches are dot-separated agent paths).
func visibleFrom(branch, eventBranch string) bool {
	n := len(eventBranch)
	return branch == "" || eventBranch == "" || branch == eventBranch ||
		(len(branch) > n && branch[:n] == eventBranch && branch[n] == '.')
}
