//go:build race

package accuracy_test

// raceEnabled reports that the tests run under the race detector, under
// which TestEstimatorHostileClasses takes minutes: make core-test runs it
// without.
const raceEnabled = true
