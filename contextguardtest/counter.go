package contextguardtest

import (
	"fmt"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"google.golang.org/adk/model"
	"google.golang.org/genai"
)

// Counters: the ground truths a run is measured against (the seeds' bytes/4 ×
// ratio, a real tokenizer's count), on ADK requests.

// Counter is a ground-truth token counter: it says how many prompt tokens a
// provider would bill for a request. Implementations must be safe for
// concurrent use.
//
// Counters in this package are additive over contents: counting a request is
// the sum of its system instruction, its tool declarations and each of its
// contents, so the tokens of a slice of contents can be counted on their own
// with [CountContents]. They are the counters of [coretest], which count a
// request's contents and configuration, behind this ADK-typed interface.
type Counter interface {
	CountRequest(req *model.LLMRequest) int
}

// kitCounter is a counter of coretest seen as a [Counter].
type kitCounter struct{ c coretest.Counter }

// CountRequest implements [Counter]; a nil request counts 0.
func (k kitCounter) CountRequest(req *model.LLMRequest) int {
	if req == nil {
		return k.c.Count(nil, nil)
	}
	return k.c.Count(req.Contents, req.Config)
}

// String names the counter.
func (k kitCounter) String() string { return fmt.Sprint(k.c) }

// requestCounter is a [Counter] seen as a counter of coretest.
type requestCounter struct{ c Counter }

// Count implements coretest.Counter.
func (r requestCounter) Count(contents []*genai.Content, config *genai.GenerateContentConfig) int {
	return r.c.CountRequest(&model.LLMRequest{Contents: contents, Config: config})
}

// String names the counter.
func (r requestCounter) String() string { return fmt.Sprint(r.c) }

// toKit returns c as a counter of coretest (nil for nil).
func toKit(c Counter) coretest.Counter {
	switch c := c.(type) {
	case nil:
		return nil
	case kitCounter:
		return c.c
	default:
		return requestCounter{c}
	}
}

// fromKit returns a counter of coretest as a [Counter] (nil for nil).
func fromKit(c coretest.Counter) Counter {
	switch c := c.(type) {
	case nil:
		return nil
	case requestCounter:
		return c.c
	default:
		return kitCounter{c}
	}
}

// SeedCounter returns the seed matrix's ground truth: the serialized size of
// the request in bytes / 4 x ratio. See [coretest.SeedCounter].
func SeedCounter(ratio float64) Counter { return kitCounter{coretest.SeedCounter(ratio)} }

// CoreCounter returns a ground truth of coretest as a [Counter]: the exact
// o200k_base one of package o200k (which the package o200k below this one
// wraps), or [coretest.TextCounter] around your own tokenizer. A nil
// counter gives nil.
func CoreCounter(c coretest.Counter) Counter { return fromKit(c) }

// CountContents returns the ground-truth tokens of contents alone (no system
// instruction, no tools) under c. A nil counter counts 0.
func CountContents(c Counter, contents []*genai.Content) int {
	return coretest.CountContents(toKit(c), contents)
}
