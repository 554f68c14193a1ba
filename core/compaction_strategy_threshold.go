package core

import (
	"google.golang.org/genai"
)

// The threshold strategy: everything since the last summary is summarized
// into one message once the request reaches the trigger (ARCHITECTURE.md,
// Strategies).

// thresholdStrategy keeps no verbatim suffix and compacts only at the token
// trigger: the previous summary plus everything after the watermark becomes
// one summary message, the request's only content.
type thresholdStrategy struct{}

func (thresholdStrategy) name() Strategy { return StrategyThreshold }

func (thresholdStrategy) due(callView, []*genai.Content) (string, []any) { return "", nil }

func (thresholdStrategy) suffixes(*compaction, string) []int { return nil }
