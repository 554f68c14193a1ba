// Package hashcount counts the contents contentid.ChainHash reads, for
// coretest, which cannot import contentid (its estimator's tests import
// coretest).
package hashcount

import "sync/atomic"

var n atomic.Int64

// Add counts one content hashed.
func Add() { n.Add(1) }

// Load is how many contents were hashed in the process.
func Load() int64 { return n.Load() }
