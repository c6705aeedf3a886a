// Package backoff is the one exponential backoff of streamshift's retry
// loops (the anchor members, the takeover pacing, the group-log
// partitions' load, the wait for the upstream, the links between
// instances, the listeners' accept): each wait doubles from Min up to Max,
// less a random part of up to a fifth of it, so that the many members,
// groups or instances that failed together (one broker down, one instance
// gone) do not retry together against the same broker or instance.
//
// The jitter takes at most a fifth off, never adds: a loop's bounds (its
// first wait, its cap) stay what its documentation and its tests say,
// and retries still spread, as each wait draws its own part, so loops in
// step drift apart by a fraction of a wait at every try.
//
// It owns no goroutine and no timer: the loop waits as it already does. It
// imports nothing of the project.
package backoff

import (
	"math/rand/v2"
	"time"
)

// Backoff is one loop's backoff. Its zero value waits Min (0: none) each
// time until Min and Max are set; it is not safe for concurrent use (a
// loop's own).
type Backoff struct {
	Min, Max time.Duration
	// Rand draws the jitter; nil: the process's shared source. A test
	// passes a seeded one.
	Rand *rand.Rand
	// next is the wait before jitter of the next try; 0: Min.
	next time.Duration
}

// Next is the wait before the next try: Min first, then twice the
// previous one up to Max, each less its jitter (jitter).
func (b *Backoff) Next() time.Duration {
	d := b.next
	if d <= 0 {
		d = b.Min
	}
	b.next = min(2*d, max(b.Max, b.Min))
	return jitter(d, b.Rand)
}

// Reset starts again from Min: a try succeeded.
func (b *Backoff) Reset() { b.next = 0 }

// jitter is d less a random part of up to a fifth of it, drawn from r
// (nil: the shared source): never longer than d, so a bound a caller
// documents still holds.
func jitter(d time.Duration, r *rand.Rand) time.Duration {
	if d <= 0 {
		return d
	}
	n := int64(d)/5 + 1
	if r != nil {
		return d - time.Duration(r.Int64N(n))
	}
	return d - time.Duration(rand.Int64N(n))
}
