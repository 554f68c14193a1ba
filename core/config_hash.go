package core

import (
	"reflect"
	"sync"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/countcache"
	"github.com/adk-contextguard/contextguard/core/internal/estimate"
	"github.com/adk-contextguard/contextguard/core/internal/tokens"
)

// configHashes caches, for the whole guard (ARCHITECTURE.md, Counting), the
// value hashes of system instructions and tool declarations by their
// identity key: an agent's are the same in all its sessions. Each entry
// pins what it was keyed on, so an address it names is not reused.
type configHashes struct {
	mu      sync.Mutex
	entries map[uint64]configHashEntry
}

type configHashEntry struct {
	pin  any
	hash uint64
}

// maxConfigHashes bounds each cache: far more instructions and declarations
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

// configCache is the guard's cache of system instructions and tool sets:
// their hashes (configs) and, by configHash, their raw estimate (fixed).
type configCache struct {
	configs configHashes
	fixed   configHashes
}

// configHash identifies by value the system instruction and tools a request
// sends and the estimator counting them (salt), so a record made under
// others does not match.
func (c *configCache) configHash(cfg *genai.GenerateContentConfig, salt uint64) uint64 {
	k := contentid.NewKeyer(salt ^ countcache.ConfigSeed)
	if cfg == nil {
		return k.Sum()
	}
	if si := cfg.SystemInstruction; si != nil {
		value := func() uint64 { return contentid.Hash(si) }
		if key, ok := contentid.Key(si); ok {
			k.Add(c.configs.get(key^countcache.InstructionSeed, si, value))
		} else {
			k.Add(value())
		}
	}
	for _, tool := range cfg.Tools {
		if tool == nil {
			continue
		}
		// Built-in tools are small and hashed on every call; declarations
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
				k.Add(c.configs.get(key^countcache.DeclarationSeed, d, value))
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

// fixedOf is estimate.Fixed cached by config, so that a session's first call
// does not count its agent's tool declarations again.
func (c *configCache) fixedOf(config uint64, est countcache.Counter, req *Request) int {
	return int(c.fixed.get(config, nil, func() uint64 { return uint64(estimate.Fixed(est, req.Config)) }))
}
