package countcache

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// parallelMinItems is the number of independent counts or hashes from
// which they are spread over the CPUs: below it, goroutines cost what they
// save.
const parallelMinItems = 16

// maxWorkers bounds spread's goroutines: counting and hashing run at
// memory speed, and more cores only contend for its bandwidth.
const maxWorkers = 8

// spreads reports whether spread would run n items in parallel.
func spreads(n int) bool {
	return n >= parallelMinItems && runtime.GOMAXPROCS(0) > 1
}

// spread runs the independent calls f(0), ..., f(n-1) on up to maxWorkers
// goroutines; when spreads(n) is false it runs nothing and returns false.
func spread(n int, f func(i int)) bool {
	if !spreads(n) {
		return false
	}
	workers := min(runtime.GOMAXPROCS(0), maxWorkers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
		}()
	}
	wg.Wait()
	return true
}
