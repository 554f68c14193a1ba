//go:build race

package core

// raceEnabled reports that the tests run under the race detector, whose
// sync.Pool drops pooled values at random: allocation counts are then not
// the program's.
const raceEnabled = true
