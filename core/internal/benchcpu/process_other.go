//go:build !unix

package benchcpu

import "time"

// Process is not measured on this platform: Report reports nothing.
func Process() time.Duration { return 0 }
