package core

import (
	"google.golang.org/genai"
)

// thresholdStrategy keeps no verbatim suffix and compacts only at the token
// trigger (ARCHITECTURE.md, Strategies).
type thresholdStrategy struct{}

func (thresholdStrategy) name() Strategy { return StrategyThreshold }

func (thresholdStrategy) due(callView, []*genai.Content) (string, []any) { return "", nil }

func (thresholdStrategy) suffixes(*compaction, string) []int { return nil }
