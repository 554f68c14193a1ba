package core

import (
	"reflect"
	"sync"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/estimate"
	"github.com/adk-contextguard/contextguard/core/internal/tokens"
)

// The hashes of the system instruction and tools, cached for the whole guard
// (ARCHITECTURE.md, Counting).

// configHashes caches, for the whole guard, the value hashes of system
// instructions and tool declarations by their identity key (their strings
// and schemas by address): an agent's instruction and tools are the same in
// all its sessions, so they are hashed once per process, not once per
// session. Each entry pins what it was keyed on, so an address it names is
// not reused while the entry exists.
type configHashes struct {
	mu      sync.Mutex
	entries map[uint64]configHashEntry
}

type configHashEntry struct {
	pin  any
	hash uint64
}

// maxConfigHashes bounds the cache (and configCache.fixed, the estimates of the
// instructions and tools by their hash): far more instructions and declarations
// than a process's agents have; past it the cache starts again empty.
const maxConfigHashes = 4096

// get returns the hash cached under key, computing it with f on a miss,
// without the lock held (f may marshal a typed schema with its own code).
func (c *configHashes) get(key uint64, pin any, f func() uint64) uint64 {
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok {
		return e.hash
	}
	h := f()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxConfigHashes {
		c.entries = make(map[uint64]configHashEntry)
	}
	c.entries[key] = configHashEntry{pin: pin, hash: h}
	return h
}

// configCache is what the guard caches of the system instructions and tool
// sets over all sessions: their hashes (configs) and, by the configHash
// of each, its raw estimate (fixed).
type configCache struct {
	configs configHashes
	fixed   configHashes
}

// configHash identifies by value what a request sends besides its contents
// (cfg: the system instruction and the tools) and the estimator counting it
// (salt): a record made under another instruction, other tools or another
// estimator does not match.
func (c *configCache) configHash(cfg *genai.GenerateContentConfig, salt uint64) uint64 {
	k := contentid.NewKeyer(salt ^ configSeed)
	if cfg == nil {
		return k.Sum()
	}
	if si := cfg.SystemInstruction; si != nil {
		value := func() uint64 { return contentid.Hash(si) }
		if key, ok := contentid.Key(si); ok {
			k.Add(c.configs.get(key^instructionSeed, si, value))
		} else {
			k.Add(value())
		}
	}
	for _, tool := range cfg.Tools {
		if tool == nil {
			continue
		}
		// The tool's built-in parts (search, code execution, ...) are
		// small and hashed on every call that has them; its declarations
		// are cached.
		k.Add(uint64(len(tool.FunctionDeclarations)))
		if hasBuiltins(tool) {
			builtin := *tool
			builtin.FunctionDeclarations = nil
			k.Add(jsonHash(builtin))
		}
		for _, d := range tool.FunctionDeclarations {
			if d == nil {
				k.Add(contentid.NilHash)
				continue
			}
			value := func() uint64 { return jsonHash(d) }
			if key, ok := contentid.DeclKey(d); ok {
				k.Add(c.configs.get(key^declarationSeed, d, value))
			} else {
				k.Add(value())
			}
		}
	}
	return k.Sum()
}

// hasBuiltins reports whether t sets any field besides its function
// declarations (every other field is a built-in tool).
func hasBuiltins(t *genai.Tool) bool {
	v := reflect.ValueOf(t).Elem()
	for i := range v.NumField() {
		if i != toolDeclarationsField && !v.Field(i).IsZero() {
			return true
		}
	}
	return false
}

// toolDeclarationsField is the index of genai.Tool's FunctionDeclarations.
var toolDeclarationsField = func() int {
	f, _ := reflect.TypeFor[genai.Tool]().FieldByName("FunctionDeclarations")
	return f.Index[0]
}()

// jsonHash is the FNV-64a hash of v's JSON, the bytes a provider is sent.
func jsonHash(v any) uint64 {
	return contentid.HashBytes(tokens.AppendJSON(nil, v))
}

// fixedOf is the raw estimate of the system instruction and tools
// (estimate.Fixed) as est counts them, cached by config, so that a session's
// first call does not count its agent's tool declarations again.
func (c *configCache) fixedOf(config uint64, est cachedEstimator, req *Request) int {
	return int(c.fixed.get(config, nil, func() uint64 { return uint64(estimate.Fixed(est, req.Config)) }))
}
