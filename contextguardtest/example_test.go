package contextguardtest_test

import (
	"context"
	"fmt"

	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/adk-contextguard/contextguard/core/coretest"
)

// Run a seed-matrix row through ADK v1 without any guard: the 8k conversation overflows and
// the provider's error surfaces to the caller. With a guard, pass its
// PluginConfig() as RunConfig.Plugins and its summarizer model as
// RunConfig.Summarizer.
func Example() {
	var sc contextguardtest.Scenario
	for _, row := range coretest.SeedMatrix() {
		if row.FullName() == "Stress_8k_NormalConversation" {
			sc = row
		}
	}
	summarizer := contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{})
	res, err := contextguardtest.Run(context.Background(), sc, contextguardtest.RunConfig{
		Counter:    contextguardtest.SeedCounter(sc.TokenRatio),
		Summarizer: summarizer,
		// Plugins: guard.PluginConfig(),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("must compact:", sc.MinSummarizerCalls > 0)
	fmt.Println("overflows surfaced:", res.OverflowsSurfaced > 0)
	fmt.Println("summarizer calls:", res.SummarizerCalls)
	// Output:
	// must compact: true
	// overflows surfaced: true
	// summarizer calls: 0
}
