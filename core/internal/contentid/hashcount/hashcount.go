// Package hashcount counts the contents read by value for prefix chains
// (contentid.ChainHash), so that a test outside the engine (coretest)
// sees what a model call did not find verified, without importing the
// estimator that contentid does.
package hashcount

import "sync/atomic"

var n atomic.Int64

// Add counts one content hashed.
func Add() { n.Add(1) }

// Load is how many contents were hashed in the process.
func Load() int64 { return n.Load() }
