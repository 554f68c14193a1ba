package core

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Telemetry: the OpenTelemetry spans and metrics of compactions and
// summarizer calls.

// instrumentationName names the guard's tracer and meter.
const instrumentationName = "github.com/adk-contextguard/contextguard"

// telemetry holds the guard's tracer and instruments.
type telemetry struct {
	tracer          trace.Tracer
	compactions     metric.Int64Counter
	fallbacks       metric.Int64Counter
	tokensBefore    metric.Int64Histogram
	tokensAfter     metric.Int64Histogram
	summarizerDelay metric.Float64Histogram
	// prepared counts the summaries prepared in the background by what
	// became of them (prepared_summary.go).
	prepared metric.Int64Counter
}

func newTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) (*telemetry, error) {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := mp.Meter(instrumentationName)
	t := &telemetry{tracer: tp.Tracer(instrumentationName)}
	var errs [6]error
	t.compactions, errs[0] = m.Int64Counter("contextguard.compactions",
		metric.WithDescription("Compactions performed."), metric.WithUnit("{compaction}"))
	t.fallbacks, errs[1] = m.Int64Counter("contextguard.fallbacks",
		metric.WithDescription("Compactions that used the deterministic fallback summary."), metric.WithUnit("{compaction}"))
	t.tokensBefore, errs[2] = m.Int64Histogram("contextguard.tokens.before",
		metric.WithDescription("Calibrated request tokens before a compaction."), metric.WithUnit("{token}"))
	t.tokensAfter, errs[3] = m.Int64Histogram("contextguard.tokens.after",
		metric.WithDescription("Calibrated request tokens after a compaction."), metric.WithUnit("{token}"))
	t.summarizerDelay, errs[4] = m.Float64Histogram("contextguard.summarizer.duration",
		metric.WithDescription("Latency of one summarizer call."), metric.WithUnit("s"))
	t.prepared, errs[5] = m.Int64Counter("contextguard.prepared_summaries",
		metric.WithDescription("Summaries prepared while tools ran, by outcome: used, dropped (the history changed, another compaction came first, a newer one replaced it, the session was evicted from memory), wasted (a compaction could not use it)."),
		metric.WithUnit("{summary}"))
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return t, nil
}

// startCompaction opens the compaction span.
func (t *telemetry) startCompaction(ctx context.Context, agentName, sessionID string, strategy Strategy) (context.Context, trace.Span) {
	return t.tracer.Start(ctx, "contextguard.compact", trace.WithAttributes(
		attribute.String("contextguard.agent", agentName),
		attribute.String("contextguard.session", sessionID),
		attribute.String("contextguard.strategy", string(strategy)),
	))
}

// endCompaction records the metrics of ev and closes span.
func (t *telemetry) endCompaction(ctx context.Context, span trace.Span, ev CompactionEvent, err error) {
	attrs := metric.WithAttributes(
		attribute.String("contextguard.agent", ev.Agent),
		attribute.String("contextguard.strategy", string(ev.Strategy)),
		attribute.Bool("contextguard.fallback", ev.Fallback),
		attribute.String("contextguard.ran", string(ev.Ran)),
		attribute.Bool("contextguard.prepared", ev.Prepared),
	)
	t.compactions.Add(ctx, 1, attrs)
	if ev.Fallback {
		t.fallbacks.Add(ctx, 1, attrs)
	}
	t.tokensBefore.Record(ctx, int64(ev.TokensBefore), attrs)
	t.tokensAfter.Record(ctx, int64(ev.TokensAfter), attrs)
	span.SetAttributes(
		attribute.Int("contextguard.tokens_before", ev.TokensBefore),
		attribute.Int("contextguard.tokens_after", ev.TokensAfter),
		attribute.Int("contextguard.threshold", ev.Threshold),
		attribute.Int("contextguard.window", ev.Window),
		attribute.Int("contextguard.summarizer_calls", ev.SummarizerCalls),
		attribute.Bool("contextguard.fallback", ev.Fallback),
		attribute.String("contextguard.reason", ev.Reason),
	)
	if ev.FallbackReason != "" {
		span.SetAttributes(attribute.String("contextguard.fallback_reason", ev.FallbackReason))
	}
	if ev.InlineReason != "" {
		span.SetAttributes(attribute.String("contextguard.inline_reason", string(ev.InlineReason)))
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// summarizerCall records one summarizer call's latency.
func (t *telemetry) summarizerCall(ctx context.Context, agentName string, d time.Duration) {
	t.summarizerDelay.Record(ctx, d.Seconds(), metric.WithAttributes(attribute.String("contextguard.agent", agentName)))
}

// preparedSummary counts a prepared summary by outcome: used, dropped or
// wasted.
func (t *telemetry) preparedSummary(ctx context.Context, agentName, outcome string) {
	t.prepared.Add(ctx, 1, metric.WithAttributes(attribute.String("contextguard.agent", agentName),
		attribute.String("contextguard.outcome", outcome)))
}
