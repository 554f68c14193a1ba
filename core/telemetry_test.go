package core

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/adk-contextguard/contextguard/core/coretest"

	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

func TestObservability_SpanMetricsAndHook(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))

	var events []CompactionEvent
	logs := &logBuffer{}
	// The summarizer takes took on the guard's clock.
	const took = 1500 * time.Millisecond
	clock := coretest.NewFakeClock(time.Time{})
	g := newGuard(NewCrushRegistry(WithRegistryLogger(logs.logger())), WithLogger(logs.logger()), WithClock(clock),
		WithTracerProvider(tp), WithMeterProvider(mp),
		WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
	sum := &fakeLLM{name: "summarizer", reply: func(context.Context, *Request) (string, error) {
		clock.Advance(took)
		return "SUMMARY", nil
	}}
	g.addModel("a", sum, WithMaxTokens(8_000))
	require.NoError(t, g.Err())

	ctx := newFakeCtx("a").withUser("LATEST please fix the build")
	raw := append(coretest.History(20, 300), userMsg("LATEST please fix the build"))
	e := testEst
	wantBefore := newCalibration(state.Agent{}, e).Count(requestTokens(e, engineReq(request(raw...))))
	req := request(raw...)
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)
	wantAfter := newCalibration(state.Agent{}, e).Count(requestTokens(e, engineReq(req)))

	// The hook.
	require.Len(t, events, 1)
	ev := events[0]
	assert.Equal(t, wantBefore, ev.TokensBefore)
	assert.Equal(t, wantAfter, ev.TokensAfter)
	assert.Less(t, ev.TokensAfter, ev.TokensBefore)
	assert.Equal(t, 6_400, ev.Threshold)
	assert.Equal(t, 8_000, ev.Window)
	assert.Equal(t, 1, ev.SummarizerCalls)
	assert.False(t, ev.Fallback)
	assert.Equal(t, len(raw), ev.ContentsSummarized)
	assert.Equal(t, StrategyThreshold, ev.Strategy)
	assert.Equal(t, "SUMMARY", ev.Summary, "the summary that went into the request")
	assert.Contains(t, textcut.ContentText(req.Contents[0]), ev.Summary)
	assert.Equal(t, took, ev.Duration, "measured on the guard's clock")

	// The span.
	ended := spans.Ended()
	require.Len(t, ended, 1)
	s := ended[0]
	assert.Equal(t, "contextguard.compact", s.Name())
	attrs := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		attrs[kv.Key] = kv.Value
	}
	assert.Equal(t, "a", attrs["contextguard.agent"].AsString())
	assert.EqualValues(t, wantBefore, attrs["contextguard.tokens_before"].AsInt64())
	assert.EqualValues(t, wantAfter, attrs["contextguard.tokens_after"].AsInt64())
	assert.EqualValues(t, 1, attrs["contextguard.summarizer_calls"].AsInt64())
	assert.False(t, attrs["contextguard.fallback"].AsBool())
	assert.Equal(t, string(ev.InlineReason), attrs["contextguard.inline_reason"].AsString(), "why it ran inline")
	assert.NotEmpty(t, ev.InlineReason)

	// The metrics.
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	got := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			got[m.Name] = m.Data
		}
	}
	require.Contains(t, got, "contextguard.compactions")
	assert.EqualValues(t, 1, got["contextguard.compactions"].(metricdata.Sum[int64]).DataPoints[0].Value)
	assert.NotContains(t, got, "contextguard.fallbacks", "no fallback recorded")
	before := got["contextguard.tokens.before"].(metricdata.Histogram[int64]).DataPoints[0]
	assert.EqualValues(t, 1, before.Count)
	assert.EqualValues(t, wantBefore, before.Sum)
	after := got["contextguard.tokens.after"].(metricdata.Histogram[int64]).DataPoints[0]
	assert.EqualValues(t, wantAfter, after.Sum)
	lat := got["contextguard.summarizer.duration"].(metricdata.Histogram[float64]).DataPoints[0]
	assert.EqualValues(t, 1, lat.Count)
	assert.InDelta(t, took.Seconds(), lat.Sum, 1e-9, "the summarizer's latency on the guard's clock")
}

func TestObservability_FallbackCounted(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	logs := &logBuffer{}
	g := newGuard(NewCrushRegistry(WithRegistryLogger(logs.logger())), WithLogger(logs.logger()), WithMeterProvider(mp))
	g.addModel("a", failingSummarizer(errBoom), WithMaxTokens(8_000))
	compactOnce(t, g, newFakeCtx("a"))
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	found := false
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "contextguard.fallbacks" {
				found = true
				assert.EqualValues(t, 1, m.Data.(metricdata.Sum[int64]).DataPoints[0].Value)
			}
		}
	}
	assert.True(t, found)
	assert.Contains(t, logs.String(), "fallback=true")
}

// TestCompactionLog_Golden holds the log lines of one compaction, as an
// operator greps them: every line about a session names the agent and the
// session, and the same quantity has the same field name on every line
// (tokens_before, tokens_after, threshold, window, strategy, duration_ms,
// summarizer_model, contents_summarized). Times and durations are masked.
// Run with -update to rewrite the golden files after a deliberate change.
func TestCompactionLog_Golden(t *testing.T) {
	tests := []struct {
		name string
		sum  *fakeLLM
		opts []AgentOption
	}{
		{name: "threshold", sum: fixedSummary("SUMMARY of the build failure")},
		{name: "sliding_window_fallback", sum: failingSummarizer(errBoom), opts: []AgentOption{WithSlidingWindow(4)}},
	}
	durations := regexp.MustCompile(`duration_ms=\d+`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &logBuffer{}
			logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{
				Level: slog.LevelInfo,
				ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
					if len(groups) == 0 && a.Key == slog.TimeKey {
						return slog.Attr{}
					}
					return a
				},
			}))
			g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithLogger(logger))
			g.addModel("builder", tt.sum, append([]AgentOption{WithMaxTokens(8_000)}, tt.opts...)...)
			require.NoError(t, g.Err())
			ctx := newFakeCtx("builder").withUser("LATEST please fix the build")
			_, err := g.beforeModel(ctx, request(append(coretest.History(20, 300), userMsg("LATEST please fix the build"))...))
			require.NoError(t, err)

			got := durations.ReplaceAllString(logs.String(), "duration_ms=N")
			path := filepath.Join("testdata", "compaction_log_"+tt.name+".golden")
			if *updateGolden {
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test -run TestCompactionLog_Golden -update to create it")
			assert.Equal(t, string(want), got)

			var compacted string
			for _, line := range strings.Split(got, "\n") {
				if line == "" {
					continue
				}
				assert.Contains(t, line, "agent=builder session=s1", "every line names the agent and the session")
				if strings.Contains(line, `msg="contextguard: compacted"`) {
					compacted = line
				}
			}
			require.NotEmpty(t, compacted, "the compaction is logged")
			for _, field := range []string{"tokens_before=", "tokens_after=", "threshold=", "window=", "strategy=", "duration_ms=", "summarizer_model=", "contents_summarized="} {
				assert.Contains(t, compacted, field)
			}
		})
	}
}
