package contextguard

import (
	"testing"
	"time"
)

// reportCPU adds CPU-time-based metrics to a benchmark: cpu-ns/op and, when
// bytes > 0, cpu-MB/s. The machines the benchmarks run on are shared, so
// wall time alone overstates the cost of the code. Call it with the process
// CPU time taken before the loop and the number of iterations run.
func reportCPU(b *testing.B, start time.Duration, iters int, bytes int64) {
	if iters == 0 {
		return
	}
	d := processCPU() - start
	if d <= 0 {
		return
	}
	b.ReportMetric(float64(d.Nanoseconds())/float64(iters), "cpu-ns/op")
	if bytes > 0 {
		b.ReportMetric(float64(bytes)*float64(iters)/d.Seconds()/1e6, "cpu-MB/s")
	}
}
