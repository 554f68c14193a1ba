//go:build unix

package benchcpu

import (
	"syscall"
	"time"
)

// Process returns the user plus system CPU time of the process.
func Process() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
