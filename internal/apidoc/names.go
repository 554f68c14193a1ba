package main

// reexported are the names of module core that each plugin package
// re-exports (ARCHITECTURE.md, Where a change goes): the engine's public
// API that takes no ADK type. A type becomes an alias, a function a
// wrapper, a constant or variable a declaration of core's value.
var reexported = []string{
	// Constants and variables.
	"CompactToolName", "DefaultContextWindow", "DefaultMaxCompactionAttempts", "DefaultMaxSessionBytes", "DefaultMaxSummarizerCalls",
	"DefaultMaxSessions", "DefaultEarlyCompaction", "DefaultPreparedSummaries", "PreparedSummariesOff", "DefaultPruneKeepSteps", "DefaultSlidingWindowTurns", "DefaultSummaryTimeout",
	"ErrIrreducible", "ErrReentrant", "MaxFocusBytes", "PluginName", "ReasonOutputLimit", "ReasonOverflow",
	"BetweenTurnsOff", "BetweenTurnsWhenDue",
	"ReasonRequested", "ReasonTokens", "RecallToolName", "ReasonTurns", "RanBetweenTurns", "RanInline", "RanPrepared",
	"InlineNotPrepared", "InlineNotPredicted", "InlinePreparedUnusable", "InlineStepTooLarge", "InlineStepFillsWindow", "StateKeyDisabled", "StrategySlidingWindow",
	"StrategyTailRetention", "StrategyThreshold", "StrategyToolResultPruning", "SummaryFormCached", "SummaryFormTranscript",
	// Types.
	"AgentOption", "BetweenTurns", "CachedSummarizer", "CachedSummaryCall", "Clock", "CompactionDecision", "CompactionEvent", "CompactionRun", "ContextOverflow", "InlineReason", "ModelRegistry", "Option",
	"NamedTokenCounter", "PendingCompaction", "RegistryOption", "Strategy", "Summarizer", "SummaryForm", "SummaryRequest", "TodoItem",
	"TokenCounter", "TokenCounterFunc", "Usage",
	// Functions.
	"AsContextOverflow", "NameTokenCounter", "NewCrushRegistry", "SystemClock", "WithBetweenTurns", "WithClock", "WithBeforeCompaction", "WithDefaultWindow", "WithEarlyCompaction", "WithInstructions",
	"WithLogger", "WithMaxCompactionAttempts", "WithMaxSessionBytes", "WithMaxSessions", "WithMaxSummarizerCalls", "WithMaxTokens", "WithPruningMinFree",
	"WithMeterProvider", "WithOnCompaction", "WithPreparedSummaries", "WithRegistryLogger", "WithReserve", "WithSlidingWindow",
	"WithSummarizer", "WithSummarizerWindow", "WithSummaryForm", "WithSummaryTimeout", "WithSummaryTokens", "WithTailRetention", "WithTokenCounter",
	"WithToolResultPruning", "WithTracerProvider", "WithTriggerFraction", "WithTriggerTokens",
}

// hostOnly are core's exported names that are not re-exported, with why:
// they are the engine's seam for the adapters, or the plugin declares its
// own. A name core exports that is in neither list stops the generator, so
// a new option cannot be left out of the plugins by mistake.
var hostOnly = map[string]string{
	"Agent":               "the engine's per-agent configuration, seen by the adapters",
	"Call":                "a seam: one model call as the adapter presents it",
	"CallBounded":         "used by the adapters' LLM summarizers",
	"Coverage":            "a seam: the host's positions of a request's contents",
	"Guard":               "the plugin's ContextGuard wraps it",
	"Host":                "a seam: the adapter's conversions",
	"HostModel":           "a seam; the plugin's WithRecoveryModel takes an ADK model",
	"IsNil":               "a helper of the adapters",
	"ModelNamer":          "a seam: a model that names itself",
	"New":                 "the plugin's New returns a ContextGuard",
	"PanicError":          "recovered from the adapters' recovery model",
	"RecallArgs":          "the recall tool's arguments, which the adapter's RecallTool decodes",
	"RecallScope":         "a seam: the branch and isolation scope a history was read in",
	"Recovery":            "a seam: an overflow recovery in progress",
	"RenderSummaryPrompt": "used by the adapters' LLM summarizers",
	"Request":             "a seam: the engine's view of a model request",
	"Response":            "a seam: the engine's view of a model response",
	"RunEnd":              "a seam: a run that ended, as the adapter's after-run callback presents it",
	"SessionAppender":     "a seam; the plugin's WithSessionService takes an ADK session service",
	"State":               "a seam: session state",
	"StateReader":         "a seam: read-only session state",
	"WithHost":            "set by the plugin's New",
	"WithRecoveryModel":   "the plugin's takes an ADK model",
	"WithSessionService":  "the plugin's takes an ADK session service",
}

// overrides are the changes a plugin's doc comment makes to core's, each an
// exact text of core's doc comment for name and what the plugin says
// instead. The generator fails when the text is no longer in core's comment,
// so a plugin's comment never drifts from core's unnoticed.
var overrides = []override{
	// The plugin's guard is ContextGuard, which wraps core's Guard.
	{name: "Option", old: "configures a Guard.", new: "configures a ContextGuard."},
}
