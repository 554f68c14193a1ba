// Package benchcpu adds CPU-time metrics to benchmarks. The machines the
// benchmarks run on are shared, so wall time alone overstates the cost of
// the code; CPU time also turns a parallel benchmark's throughput into
// throughput per core.
package benchcpu

import (
	"testing"
	"time"
)

// Report adds cpu-ns/op and, when bytes > 0, cpu-MB/s (bytes per CPU
// second, i.e. per core) to a benchmark. start is Process() taken before
// the loop, iters the number of iterations run.
func Report(b *testing.B, start time.Duration, iters int, bytes int64) {
	if iters == 0 {
		return
	}
	d := Process() - start
	if d <= 0 {
		return
	}
	b.ReportMetric(float64(d.Nanoseconds())/float64(iters), "cpu-ns/op")
	if bytes > 0 {
		b.ReportMetric(float64(bytes)*float64(iters)/d.Seconds()/1e6, "cpu-MB/s")
	}
}
