package contextguard

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func TestObservability_SpanMetricsAndHook(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))

	var events []CompactionEvent
	logs := &logBuffer{}
	g := New(NewCrushRegistry(WithRegistryLogger(logs.logger())), WithLogger(logs.logger()),
		WithTracerProvider(tp), WithMeterProvider(mp),
		WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
	sum := fixedSummary("SUMMARY")
	g.Add("a", sum, WithMaxTokens(8_000))
	require.NoError(t, g.Err())

	ctx := newFakeCtx("a").withUser("LATEST please fix the build")
	raw := append(history(20, 300), userMsg("LATEST please fix the build"))
	e := testEst
	wantBefore := newCalibration(guardState{}, e).count(requestTokens(e, request(raw...)))
	req := request(raw...)
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)
	wantAfter := newCalibration(guardState{}, e).count(requestTokens(e, req))

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
	assert.Positive(t, ev.Duration)

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
}

func TestObservability_FallbackCounted(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	logs := &logBuffer{}
	g := New(NewCrushRegistry(WithRegistryLogger(logs.logger())), WithLogger(logs.logger()), WithMeterProvider(mp))
	g.Add("a", failingSummarizer(errBoom), WithMaxTokens(8_000))
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
