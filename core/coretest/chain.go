package coretest

import "github.com/adk-contextguard/contextguard/core/internal/contentid/hashcount"

// ChainHashes is how many contents the guards of this process have hashed
// by value for their prefix chains. Read around a model call, it shows
// what the call did not find already verified: a steady call hashes only
// the contents added since the previous one.
func ChainHashes() int64 { return hashcount.Load() }
