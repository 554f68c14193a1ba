package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/glebarez/sqlite"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/model/gemini"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/session/database"
	"google.golang.org/genai"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"

	"github.com/adk-contextguard/contextguard"
	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/adk-contextguard/contextguard/contextguardtest/o200k"
)

const (
	appName   = "contextguard-demo"
	agentName = "sre"
	userID    = "oncall"
	// lastEstimateKey is the state key where the guard keeps its estimate of
	// the request it last let through (README, "Session state").
	lastEstimateKey = "__context_guard_last_heuristic_" + agentName
)

// config is what one demo run does.
type config struct {
	Turns  int    // user turns to play, 1..len(story)
	Window int    // context window given to the guard (WithMaxTokens)
	Out    string // chart path (.png or .svg); "" for none
	DB     string // SQLite file; "" for one in a temporary directory, removed at the end
	APIKey string // with a key, a real Gemini model replaces the scripted one
	Model  string // Gemini model name
	Log    io.Writer
}

// stepRecord is one model call of the agent, as the demo measured it.
type stepRecord struct {
	Step, Turn int
	Built      int // o200k tokens of the request ADK built (what would be sent without the guard)
	GuardEst   int // the guard's estimate of the request it sent (state)
	Sent       int // o200k tokens of the request sent
	Real       int // PromptTokenCount the model reported
	Compaction *contextguard.CompactionEvent
}

// tokens is the size of the request sent: the model's count, else ours.
func (s stepRecord) tokens() int {
	if s.Real > 0 {
		return s.Real
	}
	return s.Sent
}

// report is the outcome of a run.
type report struct {
	Turns, Calls     int
	Steps            []stepRecord
	Compactions      int
	Fallbacks        int
	OnRequest        int // compactions answering RequestCompaction
	SummarizerCalls  int // every summarizer call the guard made (its metrics)
	CompactionCalls  int // the summarizer calls the compaction events report
	Window, Trigger  int
	MaxSent          int // largest request sent, by o200k
	MaxReal          int // largest PromptTokenCount
	MaxBuilt         int // largest request ADK built
	OverWindow       int // requests over the window, by either count
	FindingsKept     int // findings in the closing answer (scripted model only)
	FindingsTotal    int
	Scripted         bool
	Chart            string
	DB               string
	Elapsed          time.Duration
	summarizerOnSelf int    // summaries the offline summarizer wrote (cross-check)
	Requested        int    // compactions asked for with RequestCompaction
	Recalled         string // recall_context's answer after the story
}

// recorder measures every model call of the agent through two plugins, one
// before the guard (the request ADK built) and one after it (the request
// sent), plus the guard's OnCompaction hook, and prints a line per call.
type recorder struct {
	mu      sync.Mutex
	w       io.Writer
	counter contextguardtest.Counter
	window  int
	trigger int
	turn    int
	cur     stepRecord
	steps   []stepRecord
}

func (r *recorder) beforeGuard(_ agent.CallbackContext, req *model.LLMRequest) (*model.LLMResponse, error) {
	n := r.counter.CountRequest(req)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cur = stepRecord{Step: len(r.steps) + 1, Turn: r.turn, Built: n}
	return nil, nil
}

func (r *recorder) onCompaction(_ context.Context, ev contextguard.CompactionEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cur.Compaction = &ev
	if ev.Threshold > 0 {
		r.trigger = ev.Threshold
	}
}

func (r *recorder) afterGuard(cctx agent.CallbackContext, req *model.LLMRequest) (*model.LLMResponse, error) {
	n := r.counter.CountRequest(req)
	est := 0
	if v, err := cctx.State().Get(lastEstimateKey); err == nil {
		est = asInt(v)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cur.Sent, r.cur.GuardEst = n, est
	return nil, nil
}

func (r *recorder) afterModel(_ agent.CallbackContext, resp *model.LLMResponse, respErr error) (*model.LLMResponse, error) {
	if respErr != nil || resp == nil || resp.Partial {
		return nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if resp.UsageMetadata != nil {
		r.cur.Real = int(resp.UsageMetadata.PromptTokenCount)
	}
	r.steps = append(r.steps, r.cur)
	r.printStep(r.cur)
	return nil, nil
}

// asInt reads a number from session state: int in memory, float64 from the
// database.
func asInt(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case int64:
		return int(n)
	case float64:
		return int(n)
	}
	return 0
}

const stepHeader = " step turn | ADK built | guard est |   sent | trigger | action                | window use"

func (r *recorder) printStep(s stepRecord) {
	action := "ok"
	if ev := s.Compaction; ev != nil {
		action = "COMPACTED"
		switch {
		case ev.Fallback:
			action = "FALLBACK"
		case ev.Reason == contextguard.ReasonRequested:
			action = "ON REQUEST"
		}
		action += " " + kilo(ev.TokensBefore) + "→" + kilo(ev.TokensAfter)
	}
	if s.tokens() > r.window {
		action += " OVER WINDOW"
	}
	fmt.Fprintf(r.w, " %4d %4d | %9s | %9s | %6s | %7s | %-21s | %s\n",
		s.Step, s.Turn, thousands(s.Built), thousands(s.GuardEst), thousands(s.tokens()), thousands(r.trigger), action, bar(s.tokens(), r.window))
	if s.Compaction == nil && s.tokens() > r.trigger && s.GuardEst <= r.trigger {
		// The two counts differ by a few percent; a request between them
		// looks like a missed trigger unless the line says which count
		// the guard compares.
		fmt.Fprintf(r.w, "           note: sent %s > trigger %s by o200k, but the guard judges the trigger on its own estimate (%s), so no compaction\n",
			thousands(s.tokens()), thousands(r.trigger), thousands(s.GuardEst))
	}
}

// plural is n followed by noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// bar draws utilization of the window, e.g. "[#####...............]  26%".
func bar(n, window int) string {
	const width = 20
	f := float64(n) / float64(max(window, 1))
	filled := min(int(f*width+0.5), width)
	b := "[" + strings.Repeat("#", filled) + strings.Repeat(".", width-filled) + "]"
	return fmt.Sprintf("%s %3.0f%%", b, 100*f)
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func kilo(n int) string { return fmt.Sprintf("%.1fk", float64(n)/1000) }

// triggerFor is the guard's documented default trigger: the window minus a
// buffer of 20% below 200k tokens, 20k from 200k on. The demo shows it
// before the first compaction reports the real one.
func triggerFor(window int) int {
	if window >= 200_000 {
		return window - 20_000
	}
	return window - window/5
}

// run plays the story and returns what happened. It prints a line per model
// call to w and writes the chart to cfg.Out.
func run(ctx context.Context, cfg config, w io.Writer) (*report, error) {
	start := time.Now()
	if cfg.Turns <= 0 || cfg.Turns > len(story) {
		cfg.Turns = len(story)
	}
	if cfg.Window <= 0 {
		return nil, fmt.Errorf("window must be positive, got %d", cfg.Window)
	}
	if cfg.Log == nil {
		cfg.Log = os.Stderr
	}
	counter := o200k.Counter(1)
	rep := &report{Window: cfg.Window, Trigger: triggerFor(cfg.Window)}

	// The models: scripted offline, or Gemini with a key.
	var llm, summarizerLLM model.LLM
	var sre *sreModel
	var sum *summarizerModel
	if cfg.APIKey != "" {
		g, err := gemini.NewModel(ctx, cfg.Model, &genai.ClientConfig{APIKey: cfg.APIKey})
		if err != nil {
			return nil, fmt.Errorf("gemini model %q: %w", cfg.Model, err)
		}
		llm, summarizerLLM = g, g
	} else {
		sre, sum = newSREModel(counter), newSummarizerModel(counter)
		llm, summarizerLLM = sre, sum
		rep.Scripted = true
	}

	tools, err := newTools()
	if err != nil {
		return nil, err
	}
	sreAgent, err := llmagent.New(llmagent.Config{
		Name:        agentName,
		Model:       llm,
		Description: "On-call SRE assistant with kubectl and file tools.",
		Instruction: systemInstruction,
		Tools:       tools,
	})
	if err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}

	// The session service: ADK's SQL service on a SQLite file.
	dbPath := cfg.DB
	if dbPath == "" {
		dir, err := os.MkdirTemp("", "contextguard-demo-")
		if err != nil {
			return nil, fmt.Errorf("temp dir: %w", err)
		}
		defer os.RemoveAll(dir)
		dbPath = filepath.Join(dir, "sessions.db")
	}
	rep.DB = dbPath
	sessions, err := database.NewSessionService(sqlite.Open(dbPath), &gorm.Config{Logger: gormlogger.Discard})
	if err != nil {
		return nil, fmt.Errorf("session database %s: %w", dbPath, err)
	}
	if err := database.AutoMigrate(sessions); err != nil {
		return nil, fmt.Errorf("session database %s: %w", dbPath, err)
	}
	created, err := sessions.Create(ctx, &session.CreateRequest{AppName: appName, UserID: userID})
	if err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	sessionID := created.Session.ID()

	// The guard, and the demo's measuring plugins around it.
	rec := &recorder{w: w, counter: counter, window: cfg.Window, trigger: rep.Trigger}
	// The guard's metrics are read once the story ends: they count every
	// summarizer call it made, including those of summaries it prepared
	// while tools ran and dropped before use, which no compaction event
	// reports.
	metrics := sdkmetric.NewManualReader()
	guard := contextguard.New(nil,
		contextguard.WithLogger(slog.New(slog.NewTextHandler(cfg.Log, &slog.HandlerOptions{Level: slog.LevelWarn}))),
		contextguard.WithOnCompaction(rec.onCompaction),
		contextguard.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(metrics))))
	// The demo shows each compaction on the model call that made it: the
	// ones a run's end could make (README, Compaction between turns) are
	// left to the model call too.
	guard.Add(agentName, summarizerLLM, contextguard.WithMaxTokens(cfg.Window), contextguard.WithBetweenTurns(contextguard.BetweenTurnsOff))
	guardPlugin, err := guard.Plugin()
	if err != nil {
		return nil, fmt.Errorf("guard: %w", err)
	}
	before, err := plugin.New(plugin.Config{Name: "demo-measure-built", BeforeModelCallback: rec.beforeGuard})
	if err != nil {
		return nil, fmt.Errorf("plugin: %w", err)
	}
	after, err := plugin.New(plugin.Config{Name: "demo-measure-sent", BeforeModelCallback: rec.afterGuard, AfterModelCallback: rec.afterModel})
	if err != nil {
		return nil, fmt.Errorf("plugin: %w", err)
	}
	r, err := runner.New(runner.Config{
		AppName:        appName,
		Agent:          sreAgent,
		SessionService: sessions,
		PluginConfig:   runner.PluginConfig{Plugins: []*plugin.Plugin{before, guardPlugin, after}},
	})
	if err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}

	mode := "offline: scripted model, no network"
	if !rep.Scripted {
		mode = "live: " + cfg.Model
	}
	fmt.Fprintf(w, "contextguard demo (%s)\nwindow %s tokens, trigger %s, %d user turns, session in SQLite %s\n\n",
		mode, thousands(cfg.Window), thousands(rep.Trigger), cfg.Turns, dbPath)
	fmt.Fprintln(w, stepHeader)

	var closing string
	for t := range cfg.Turns {
		rec.mu.Lock()
		rec.turn = t + 1
		rec.mu.Unlock()
		if t+1 == compactRequestTurn {
			// What an app does for a user's "/compact <focus>": ask the
			// guard, between runs, to compact the next model call.
			fmt.Fprintf(w, "turn %d/%d  user: /compact %s\n", t+1, cfg.Turns, compactFocus)
			if err := guard.RequestCompaction(ctx, sessions, appName, userID, sessionID, agentName, compactFocus); err != nil {
				return nil, fmt.Errorf("request compaction: %w", err)
			}
			rep.Requested++
		}
		fmt.Fprintf(w, "turn %d/%d  user: %s\n", t+1, cfg.Turns, clip(story[t].User, 100))
		answer := ""
		msg := genai.NewContentFromText(story[t].User, genai.RoleUser)
		for ev, err := range r.Run(ctx, userID, sessionID, msg, agent.RunConfig{}) {
			if err != nil {
				return nil, fmt.Errorf("turn %d: %w", t+1, err)
			}
			if ev != nil && ev.Author == agentName && ev.Content != nil && !ev.Partial {
				if s := contentText(ev.Content); s != "" && !hasCall(ev.Content) {
					answer = s
				}
			}
		}
		fmt.Fprintf(w, "           %s: %s\n", agentName, clip(firstLine(answer), 100))
		closing = answer
		u, err := guard.Usage(ctx, sessions, appName, userID, sessionID, agentName)
		if err != nil {
			return nil, fmt.Errorf("usage: %w", err)
		}
		fmt.Fprintf(w, "           %s\n", usageLine(u))
	}

	rec.mu.Lock()
	rep.Steps = append([]stepRecord(nil), rec.steps...)
	rep.Trigger = rec.trigger
	rec.mu.Unlock()
	rep.Turns = cfg.Turns
	rep.Calls = len(rep.Steps)
	for _, s := range rep.Steps {
		rep.MaxSent = max(rep.MaxSent, s.Sent)
		rep.MaxReal = max(rep.MaxReal, s.Real)
		rep.MaxBuilt = max(rep.MaxBuilt, s.Built)
		if s.Sent > cfg.Window || s.Real > cfg.Window {
			rep.OverWindow++
		}
		if ev := s.Compaction; ev != nil {
			rep.Compactions++
			rep.CompactionCalls += ev.SummarizerCalls
			if ev.Reason == contextguard.ReasonRequested {
				rep.OnRequest++
			}
			if ev.Fallback {
				rep.Fallbacks++
			}
		}
	}
	if rep.Scripted {
		if cfg.Turns == len(story) {
			rep.FindingsTotal = len(allFindings())
			for _, f := range allFindings() {
				if strings.Contains(closing, f) {
					rep.FindingsKept++
				}
			}
		}
	}
	if cfg.Out != "" {
		if err := writeChart(rep, cfg.Out); err != nil {
			return nil, err
		}
		rep.Chart = cfg.Out
		if abs, err := filepath.Abs(cfg.Out); err == nil {
			rep.Chart = abs
		}
	}
	if rep.Compactions > 0 {
		if rep.Recalled, err = recallFact(ctx, guard, guardPlugin, sessions, sessionID, llm.Name()); err != nil {
			return nil, err
		}
	}
	// The app is done with the guard: Close waits for a summary still
	// being prepared, so that the guard's metrics count its call, and the
	// summarizer's own count is read after it.
	if err := guard.Close(); err != nil {
		return nil, fmt.Errorf("guard: %w", err)
	}
	if rep.SummarizerCalls, err = summarizerCalls(ctx, metrics); err != nil {
		return nil, err
	}
	if rep.Scripted {
		rep.summarizerOnSelf = sum.Calls()
	}
	rep.Elapsed = time.Since(start)
	printReport(w, rep)
	printLastSummary(w, rep)
	if rep.Recalled != "" {
		printRecall(w, rep.Recalled)
	}
	return rep, nil
}

func hasCall(c *genai.Content) bool {
	for _, p := range c.Parts {
		if p != nil && p.FunctionCall != nil {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

func clip(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

func printReport(w io.Writer, r *report) {
	maxStep := stepRecord{}
	for _, s := range r.Steps {
		if s.tokens() > maxStep.tokens() {
			maxStep = s
		}
	}
	fmt.Fprintf(w, "\n== report\n")
	fmt.Fprintf(w, "turns              %d\n", r.Turns)
	fmt.Fprintf(w, "model calls        %d (agent)\n", r.Calls)
	fmt.Fprintf(w, "compactions        %d (on request: %d, fallback summaries: %d)\n", r.Compactions, r.OnRequest, r.Fallbacks)
	fmt.Fprintf(w, "summarizer calls   %d", r.SummarizerCalls)
	if dropped := r.SummarizerCalls - r.CompactionCalls; dropped > 0 {
		fmt.Fprintf(w, " (%d in compactions, %d for summaries prepared while tools ran that no compaction used)", r.CompactionCalls, dropped)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "max utilization    %.0f%% of the %s-token window (step %d: %s tokens)\n",
		100*float64(maxStep.tokens())/float64(r.Window), thousands(r.Window), maxStep.Step, thousands(maxStep.tokens()))
	over := "none"
	if r.OverWindow > 0 {
		over = strings.ToUpper(plural(r.OverWindow, "request")) + " OVER THE WINDOW"
	}
	fmt.Fprintf(w, "over the window    %s (largest sent: %s tokens by o200k; ADK built up to %s without the guard)\n",
		over, thousands(r.MaxSent), thousands(r.MaxBuilt))
	if r.FindingsTotal > 0 {
		fmt.Fprintf(w, "findings kept      %d/%d still in the agent's context for its closing summary\n", r.FindingsKept, r.FindingsTotal)
	}
	if r.Chart != "" {
		fmt.Fprintf(w, "chart              %s\n", r.Chart)
	}
	fmt.Fprintf(w, "elapsed            %s\n", r.Elapsed.Round(10*time.Millisecond))
}

// compactRequestTurn is the turn before which the demo asks for a
// compaction, as a user typing "/compact <focus>" would; compactFocus is
// the focus.
const (
	compactRequestTurn = 9
	compactFocus       = "keep every finding about the idempotency cache and the OOM kills"
)

// usageLine is the context line agent UIs show, from the guard's Usage.
func usageLine(u contextguard.Usage) string {
	line := fmt.Sprintf("context: %.0f%% of %s tokens (the guard counts %s, compacts at %s), %s",
		100*u.Utilization, thousands(u.Window), thousands(u.Tokens), thousands(u.Threshold), plural(u.Compactions, "compaction"))
	if u.LastCompactionReason != "" {
		line += ", last: " + u.LastCompactionReason
	}
	return line
}

// summaryLines bounds the summary the demo prints.
const summaryLines = 30

// printLastSummary prints the summary of the run's last compaction as the
// model received it, saying who wrote it.
func printLastSummary(w io.Writer, r *report) {
	var last *contextguard.CompactionEvent
	for _, s := range r.Steps {
		if s.Compaction != nil && s.Compaction.Summary != "" {
			last = s.Compaction
		}
	}
	if last == nil {
		return
	}
	who := "written by the model"
	if r.Scripted {
		who = "written by the demo's scripted summarizer, offline: it lists the findings and commands it read;" +
			"\na real model (set GOOGLE_API_KEY) writes it from the whole transcript, adding the reasoning," +
			"\nthe decisions taken and the exact next steps, in the sections the guard's prompt asks for"
	}
	fmt.Fprintf(w, "\n== the last summary (%s)\n", who)
	lines := strings.Split(strings.TrimSpace(last.Summary), "\n")
	if len(lines) > summaryLines {
		lines = append(lines[:summaryLines], fmt.Sprintf("… (%d more lines)", len(lines)-summaryLines))
	}
	for _, l := range lines {
		fmt.Fprintf(w, "  %s\n", l)
	}
}

// errNoSteps is returned when a run made no model call.
var errNoSteps = errors.New("no model calls were recorded")

// summarizerCalls is how many summarizer calls the guard made, from the
// count of its contextguard.summarizer.duration histogram.
func summarizerCalls(ctx context.Context, r sdkmetric.Reader) (int, error) {
	var rm metricdata.ResourceMetrics
	if err := r.Collect(ctx, &rm); err != nil {
		return 0, fmt.Errorf("guard metrics: %w", err)
	}
	var n uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok && m.Name == "contextguard.summarizer.duration" {
				for _, dp := range h.DataPoints {
					n += dp.Count
				}
			}
		}
	}
	return int(n), nil
}
