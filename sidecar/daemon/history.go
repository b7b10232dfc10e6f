package daemon

import (
	"context"
	"sync"
	"time"

	"github.com/augur-hpc/augur/sidecar/store"
)

// historyCache keeps the recent history of each (user, signature) in memory
// for a short time. The same job is typically submitted many times in a row
// (job arrays, sweeps, retries), and asking SQLite for its history on every
// submission was the largest part of a decision. An entry lives ttl; augurd
// drops the whole cache whenever it stores an outcome itself, so only
// outcomes written by another process (an import) wait up to ttl to be seen.
type historyCache struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[historyKey]historyEntry
}

type historyKey struct {
	uid uint32
	sig string
}

type historyEntry struct {
	rows []store.Outcome
	at   time.Time
}

// maxHistoryEntries bounds the cache; past it the cache starts over.
const maxHistoryEntries = 100_000

func newHistoryCache(ttl time.Duration, now func() time.Time) *historyCache {
	return &historyCache{ttl: ttl, now: now, entries: map[historyKey]historyEntry{}}
}

// get returns the cached rows, or loads them with load and caches them.
func (c *historyCache) get(ctx context.Context, uid uint32, sig string, load func(context.Context) ([]store.Outcome, error)) ([]store.Outcome, error) {
	k := historyKey{uid, sig}
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[k]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < c.ttl {
		return e.rows, nil
	}
	rows, err := load(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.entries) >= maxHistoryEntries {
		clear(c.entries)
	}
	c.entries[k] = historyEntry{rows: rows, at: now}
	c.mu.Unlock()
	return rows, nil
}

// invalidate forgets everything.
func (c *historyCache) invalidate() {
	c.mu.Lock()
	clear(c.entries)
	c.mu.Unlock()
}
