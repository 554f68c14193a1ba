package core

import (
	"errors"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/state"
)

// Recall (ARCHITECTURE.md, Recall): what compactions and pruning removed
// stays one tool call away; the engine keeps only an index of the event log
// the adapter hands it, never a copy in the session state.

// RecallToolName is the name of the tool RecallTool returns. When a request
// declares a tool of this name, the summary message and the pruning
// placeholders tell the model that the earlier conversation can be
// recalled, and how.
const RecallToolName = "recall_context"

// RecallArgs are the recall tool's arguments.
type RecallArgs struct {
	// Query is words or a phrase to search for.
	Query string `json:"query,omitempty" jsonschema:"words or a phrase from the earlier conversation to look for, for example an error message, a file name or a value the user gave"`
	// CallID names a pruned tool result, returned whole, in pages.
	CallID string `json:"call_id,omitempty" jsonschema:"optional: the call_id of a tool result that was removed to save context; its full text is returned in pages"`
	// Page is the page to return, from 1.
	Page int `json:"page,omitempty" jsonschema:"optional: the page of matches or of a tool result to return, from 1"`
}

// RecallScope is where a history was read: the host's branch and isolation
// scope. An index is kept per agent and scope; a recall in another scope
// rebuilds it, so no excerpt crosses scopes.
type RecallScope struct {
	Branch, IsolationScope string
}

// Recall answers the recall tool of agentName in the session of c. history
// is the session's contents as the agent sees them (the event log filtered
// to its branch and isolation scope, in order), st the session's state. It
// searches what the stored summary covers and what pruning replaced; a
// call_id names one pruned result. The answer is text for the model, about
// 2,000 tokens as the guard counts them, at most a quarter of the room the
// agent's last request left; an unusable query gets a message saying why.
// The error is for a guard that cannot answer (nil, an agent it does not
// guard, a session busy past the call's context). For adapters.
func (g *Guard) Recall(c Call, st StateReader, agentName string, scope RecallScope, history []*genai.Content, args RecallArgs) (string, error) {
	if err := g.CheckAgent(agentName); err != nil {
		return "", err
	}
	if c == nil {
		return "", errors.New("contextguard: Recall: no call")
	}
	cfg := g.agent(agentName)
	sio := cfg.stateIO(g.log)
	s := sio.LoadAll(st)
	q, note := cleanQuery(args.Query)
	if args.CallID == "" && len(q.terms) == 0 {
		return note, nil
	}
	sess, err := g.sessions.acquire(c, sessionKey(c))
	if err != nil {
		return "", sessionError(c, agentName, err)
	}
	defer g.sessions.release(sess)
	mem := sess.memory(agentName)
	est, _ := cfg.estimator(mem.model)
	fit := recallFitFor(recallBudget(s), est, s)
	if args.CallID != "" {
		return recallResult(history, args.CallID, args.Page, fit), nil
	}
	x := mem.recallIndexFor(scope)
	indexRemoved(x, history, s, cfg)
	return renderMatches(x, q, args.Page, fit, note), nil
}

// recallIndexFor is the agent's index in scope, new when it has none there.
func (m *agentMemory) recallIndexFor(scope RecallScope) *recallIndex {
	key := scope.Branch + "\x00" + scope.IsolationScope
	if m.recall == nil || m.recall.scope != key {
		m.recall = newRecallIndex(key)
	}
	return m.recall
}

// indexRemoved indexes, once each, the contents before the stored cut and
// the tool results pruning replaced; a history that no longer holds what x
// was built from rebuilds it. The full frontier is searched, so results the
// next pass may prune are too.
func indexRemoved(x *recallIndex, history []*genai.Content, s state.Agent, cfg *Agent) {
	if !x.valid(history) {
		*x = *newRecallIndex(x.scope)
	}
	seen := recallScan{contents: len(history), watermark: s.Watermark, fingerprint: s.Fingerprint, summary: s.Summary != ""}
	if x.scanned == seen {
		return // the same history and the same cut: nothing new
	}
	x.scanned = seen
	cut := 0
	if s.Summary != "" {
		cut, _, _, _ = locateCut(history, s, nil)
	}
	frontier := pruneFrontier(cfg.pruneKeep, history)
	turn, step := 0, 0
	for i, c := range history {
		if isUserTurn(c) {
			turn++
		}
		resp := hasFunctionResponse(c)
		if resp {
			step++
		}
		if i < cut || (resp && step <= frontier) {
			x.add(history, i, turn)
		} else if i >= cut && step > frontier {
			break
		}
	}
}

// recallScan is the history's length and stored cut an index last saw.
type recallScan struct {
	contents, watermark int
	fingerprint         string
	summary             bool
}

// isUserTurn reports whether c is a user text with no tool response.
func isUserTurn(c *genai.Content) bool {
	if c == nil || c.Role != genai.RoleUser || hasFunctionResponse(c) {
		return false
	}
	for _, p := range c.Parts {
		if p != nil && p.Text != "" {
			return true
		}
	}
	return false
}

// declaresRecall reports whether cfg declares the recall tool, so the model
// is told of it exactly when it can call it.
func declaresRecall(cfg *genai.GenerateContentConfig) bool {
	if cfg == nil {
		return false
	}
	for _, tl := range cfg.Tools {
		if tl == nil {
			continue
		}
		for _, d := range tl.FunctionDeclarations {
			if d != nil && d.Name == RecallToolName {
				return true
			}
		}
	}
	return false
}

// recallRetained is what the agents' recall indexes retain.
func (e *sessionEntry) recallRetained() int {
	n := 0
	for _, m := range e.agents {
		if m.recall != nil {
			n = sat.Add(n, m.recall.bytes)
		}
	}
	return n
}
