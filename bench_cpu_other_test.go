//go:build !unix

package contextguard

import "time"

// processCPU is not measured on this platform: reportCPU reports nothing.
func processCPU() time.Duration { return 0 }
