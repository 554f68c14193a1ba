// Package o200k is the test kit's exact ground truth: OpenAI's o200k_base
// tokenizer's count of a request, as a [contextguardtest.Counter]. It is a
// package of its own because the tokenizer is a large download (16 MB
// unpacked, with its regular-expression engine): a test that asks for
// exact counts imports it, and a module whose tests do not never downloads
// the tokenizer.
package o200k

import (
	"github.com/adk-contextguard/contextguard/contextguardtest"
	coreo200k "github.com/adk-contextguard/contextguard/core/coretest/o200k"
)

// Counter returns a ground truth based on the exact o200k_base tokenizer,
// times factor (a provider factor: 1.0 for GPT-like models, about 1.2 for
// Claude; a factor <= 0 counts as 1). See the package o200k of coretest
// for what it counts.
func Counter(factor float64) contextguardtest.Counter {
	return contextguardtest.CoreCounter(coreo200k.Counter(factor))
}
