package predictor

import (
	"crypto/sha256"
	"encoding/binary"
	"maps"
	"slices"
	"sync/atomic"
	"unsafe"

	lru "github.com/hashicorp/golang-lru/v2"
)

// ScriptCache remembers the reading of the scripts it has parsed, keyed by
// the script's SHA-256, so that a script submitted again (a sweep of sbatch
// calls, a resubmission) costs a hash rather than a parse. It holds at most
// its size in scripts, least recently used out first; it is safe for
// concurrent use, and a nil *ScriptCache parses every time.
type ScriptCache struct {
	lru          *lru.Cache[[sha256.Size]byte, Script]
	hits, misses atomic.Uint64
}

// NewScriptCache returns a cache of up to size scripts (at least 1).
func NewScriptCache(size int) *ScriptCache {
	c, err := lru.New[[sha256.Size]byte, Script](max(size, 1))
	if err != nil {
		panic(err) // only for a size below 1, ruled out above
	}
	return &ScriptCache{lru: c}
}

// Parse is ParseScript through the cache. Each caller gets its own copy:
// changing what it returns never changes what the cache holds.
func (c *ScriptCache) Parse(text string) Script {
	return c.ParseArgs(text, nil)
}

// ParseArgs is ParseScriptArgs through the cache: a script is the same
// script again only with the same arguments (or with them unknown again).
func (c *ScriptCache) ParseArgs(text string, args []string) Script {
	return c.ParseEnv(text, args, nil)
}

// ParseEnv is ParseScriptEnv through the cache: a script is the same
// script again only with the same arguments and environment.
func (c *ScriptCache) ParseEnv(text string, args, env []string) Script {
	return c.ParseFiles(text, args, env, nil)
}

// ParseFiles is ParseScriptFiles through the cache: a script is the same
// script again only with the same arguments, environment and files. The
// reading without files, which gives the signature and the files named,
// is cached as ParseEnv's; a miss with files starts from it (found there
// or kept there), and counts as the one miss it is.
func (c *ScriptCache) ParseFiles(text string, args, env []string, files map[string]string) Script {
	if c == nil {
		return ParseScriptFiles(text, args, env, files)
	}
	key := scriptKey(text, args, env, files)
	if s, ok := c.lru.Get(key); ok {
		c.hits.Add(1)
		return s.clone()
	}
	c.misses.Add(1)
	var s Script
	if len(files) == 0 {
		s = ParseScriptEnv(text, args, env)
	} else {
		noFiles := scriptKey(text, args, env, nil)
		first, ok := c.lru.Get(noFiles)
		if !ok {
			first = ParseScriptEnv(text, args, env)
			c.lru.Add(noFiles, first.clone())
		}
		s = withFiles(first.clone(), text, args, env, files, nil)
	}
	c.lru.Add(key, s.clone())
	return s
}

// ReadJobFiles is ReadJobFiles through the cache: first is the reading
// without files (ParseEnv's), and each round's reading is looked up, or
// kept, as ParseFiles' with the files read so far, so that the same job
// with the same files again, or read again from its stored request
// (core.JobFromRequest), costs no parse. Each round counts as one lookup.
func (c *ScriptCache) ReadJobFiles(first Script, text string, args, env []string, read func(paths []string) map[string]string) (Script, map[string]string) {
	return readJobFiles(first, text, args, env, read, c)
}

// scriptKey hashes a script with its arguments, environment and files.
func scriptKey(text string, args, env []string, files map[string]string) [sha256.Size]byte {
	// The hash reads the script in place: no copy of a script of several MB.
	h := sha256.New()
	h.Write(unsafe.Slice(unsafe.StringData(text), len(text)))
	// After the script, the arguments, the environment and the files'
	// paths and texts, each list counted and each entry length-prefixed,
	// so that no script, arguments, environment and files hash as
	// another's; unknown arguments are marked apart from none.
	var n [8]byte
	list := func(tag byte, l []string) {
		binary.LittleEndian.PutUint64(n[:], uint64(len(l)))
		h.Write([]byte{tag})
		h.Write(n[:])
		for _, a := range l {
			binary.LittleEndian.PutUint64(n[:], uint64(len(a)))
			h.Write(n[:])
			h.Write(unsafe.Slice(unsafe.StringData(a), len(a)))
		}
	}
	if args != nil {
		list(0, args)
	}
	if len(env) > 0 {
		list(1, env)
	}
	if len(files) > 0 {
		l := make([]string, 0, 2*len(files))
		for _, p := range slices.Sorted(maps.Keys(files)) {
			l = append(l, p, files[p])
		}
		list(2, l)
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}

// Stats reports the cache's hits and misses since it was made.
func (c *ScriptCache) Stats() (hits, misses uint64) {
	if c == nil {
		return 0, 0
	}
	return c.hits.Load(), c.misses.Load()
}

// clone copies what a Script shares by reference.
func (s Script) clone() Script {
	s.Sbatch = slices.Clone(s.Sbatch)
	s.Features.Unknown = slices.Clone(s.Features.Unknown)
	s.Features.From = maps.Clone(s.Features.From)
	s.Files = slices.Clone(s.Files)
	return s
}
