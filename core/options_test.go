package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/adk-contextguard/contextguard/core/coretest"
)

// TestCountOptions: every count option reads 0 as its own meaning, fails
// below 0 with an error saying what 0 means, and a window option fails
// outside [minWindow, maxWindow].
func TestCountOptions(t *testing.T) {
	tests := []struct {
		name    string
		opt     AgentOption
		check   func(t *testing.T, c *Agent)
		wantErr string
	}{
		{"sliding window 0 is the default", WithSlidingWindow(0), func(t *testing.T, c *Agent) {
			assert.Equal(t, slidingWindow{maxTurns: DefaultSlidingWindowTurns}, c.policy)
		}, ""},
		{"sliding window below 0", WithSlidingWindow(-1), nil, "WithSlidingWindow(-1): must be >= 0 (0 means the default 20)"},
		{"pruning 0 is the default", WithToolResultPruning(0), func(t *testing.T, c *Agent) {
			assert.Equal(t, DefaultPruneKeepSteps, c.pruneKeep)
		}, ""},
		{"pruning below 0", WithToolResultPruning(-2), nil, "WithToolResultPruning(-2): must be >= 0 (0 means the default 3)"},
		{"attempts 0 is the default", WithMaxCompactionAttempts(0), func(t *testing.T, c *Agent) {
			assert.Equal(t, DefaultMaxCompactionAttempts, c.maxAttempts)
		}, ""},
		{"summarizer calls 0 is the default", WithMaxSummarizerCalls(0), func(t *testing.T, c *Agent) {
			assert.Equal(t, DefaultMaxSummarizerCalls, c.maxSummarizerCalls)
		}, ""},
		{"summary tokens 0 is the default", WithSummaryTokens(0), func(t *testing.T, c *Agent) {
			assert.Zero(t, c.summaryTokens)
		}, ""},
		{"summary tokens below 0", WithSummaryTokens(-1), nil, "WithSummaryTokens(-1): must be >= 0 (0 means the default, half the buffer)"},
		{"summarizer window 0 is the agent's", WithSummarizerWindow(0), func(t *testing.T, c *Agent) {
			assert.Zero(t, c.summarizerWindow)
		}, ""},
		{"summarizer window below the least window", WithSummarizerWindow(1_023), nil, "WithSummarizerWindow(1023): a window must be between 1024 and 100000000 tokens"},
		{"summarizer window at the least window", WithSummarizerWindow(minWindow), func(t *testing.T, c *Agent) {
			assert.Equal(t, minWindow, c.summarizerWindow)
		}, ""},
		{"max tokens 0 is the registry's", WithMaxTokens(0), func(t *testing.T, c *Agent) {
			assert.Zero(t, c.maxTokens)
		}, ""},
		{"max tokens of 10", WithMaxTokens(10), nil, "WithMaxTokens(10): a window must be between 1024 and 100000000 tokens (0 means the registry's window)"},
		{"max tokens of 2^40", WithMaxTokens(1 << 40), nil, "WithMaxTokens(1099511627776): a window must be between"},
		{"max tokens at the largest window", WithMaxTokens(maxWindow), func(t *testing.T, c *Agent) {
			assert.Equal(t, maxWindow, c.maxTokens)
		}, ""},
		{"pruning minimum 0 is the default", WithPruningMinFree(0), func(t *testing.T, c *Agent) {
			assert.Zero(t, c.pruneMinFree)
		}, ""},
		{"pruning minimum below 0", WithPruningMinFree(-1), nil, "WithPruningMinFree(-1): must be >= 0 (0 is the default, pruning only at the trigger)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := agentConfigFor("a", `Add("a")`, fixedSummary("x"), []AgentOption{tt.opt})
			if tt.wantErr != "" {
				require.Len(t, cfg.errs, 1)
				assert.ErrorContains(t, cfg.errs[0], tt.wantErr)
				return
			}
			require.Empty(t, cfg.errs)
			tt.check(t, cfg)
		})
	}
}

// TestGuardCountOptions: the guard's count options go through the same
// helper, with the guard's prefix on their errors.
func TestGuardCountOptions(t *testing.T) {
	tests := []struct {
		name    string
		opt     Option
		wantErr string
	}{
		{"prepared summaries 0 turns them off", WithPreparedSummaries(0), ""},
		{"prepared summaries below 0", WithPreparedSummaries(-1), "contextguard: WithPreparedSummaries(-1): must be >= 0 (0 turns prepared summaries off)"},
		{"sessions 0 is the default", WithMaxSessions(0), ""},
		{"sessions below 0", WithMaxSessions(-1), "contextguard: WithMaxSessions(-1): must be >= 0 (0 means the default 10000)"},
		{"session bytes below 0", WithMaxSessionBytes(-1), "contextguard: WithMaxSessionBytes(-1): must be >= 0 (0 means the default"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := newGuard(nil, tt.opt).Err()
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}

// TestRegistryOptions: the default registry's options fail as the others
// do, and the guard built with it reports their errors.
func TestRegistryOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    []RegistryOption
		wantErr string
	}{
		{"default window 0 reports unknown models as unknown", []RegistryOption{WithDefaultWindow(0)}, ""},
		{"default window below 0", []RegistryOption{WithDefaultWindow(-1)}, "contextguard: WithDefaultWindow(-1): must be >= 0 (0 reports an unknown model as unknown)"},
		{"default window of 100", []RegistryOption{WithDefaultWindow(100)}, "WithDefaultWindow(100): a window must be between 1024 and 100000000 tokens"},
		{"nil registry logger", []RegistryOption{WithRegistryLogger(nil)}, "contextguard: WithRegistryLogger: logger is nil"},
		{"nil registry option", []RegistryOption{nil}, "contextguard: nil RegistryOption"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := newGuard(NewCrushRegistry(tt.opts...)).Err()
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}

// TestRequiredOptions: an option whose value must be given fails on nil
// and on a typed nil alike (a nil pointer in the interface would crash at
// its first use, long after New returned), and accepts a real value.
func TestRequiredOptions(t *testing.T) {
	var nilClock *coretest.FakeClock
	tests := []struct {
		name    string
		opt     Option
		wantErr string
	}{
		{"a clock", WithClock(SystemClock()), ""},
		{"a typed nil clock", WithClock(nilClock), "contextguard: WithClock: clock is nil"},
		{"a tracer provider", WithTracerProvider(tracenoop.NewTracerProvider()), ""},
		{"a typed nil tracer provider", WithTracerProvider((*tracenoop.TracerProvider)(nil)), "contextguard: WithTracerProvider: provider is nil"},
		{"a typed nil meter provider", WithMeterProvider((*metricnoop.MeterProvider)(nil)), "contextguard: WithMeterProvider: provider is nil"},
		{"a nil hook", WithOnCompaction(nil), "contextguard: WithOnCompaction: hook is nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := New(nil, WithLogger(quietLogger), tt.opt).Err()
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}

	t.Run("an agent's typed nil counter", func(t *testing.T) {
		cfg := newAgentConfig("a", `Add("a")`, fixedSummary("x"), nil, []AgentOption{WithTokenCounter(TokenCounterFunc(nil))})
		require.Len(t, cfg.errs, 1)
		assert.ErrorContains(t, cfg.errs[0], "WithTokenCounter: counter is nil")
	})
}
