package main

import (
	"context"
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/rs/zerolog"
)

// The README promises that under overload the proxy stays below its idle
// size plus twice limits.max-buffered-bytes. The buffered bytes are live
// heap; with the collector's default GOGC of 100 the heap may grow to twice
// the live heap before a collection, so a burst that fills the budget
// between two collections lands right at the promise (TestOverload's
// pipelining attack peaked at 131–163 MiB against 160). A soft memory
// limit at the promise makes the collector run before the heap passes it.
//
// The proxy's own state (groups, members, caches) is live heap too and may
// outgrow the budget: the limit is the larger of the promise and twice the
// state plus the budget, the state being the live heap after the last
// collection less the bytes buffered then. Between the limit and the
// largest live heap (the state plus a full budget) there is then always at
// least the state's size, so the collector never runs continuously. An
// operator's GOMEMLIMIT wins: nothing is set when it is in the environment.

// memoryLimitEvery is how often the limit follows the live heap.
const memoryLimitEvery = 2 * time.Second

// softMemoryLimit is the limit for a runtime of base bytes at start (the
// Go runtime's total memory then), a budget of maxBuffered bytes, a live
// heap of live bytes and buffered bytes held at the same time.
func softMemoryLimit(base, maxBuffered, live, buffered uint64) int64 {
	state := live - min(live, buffered)
	limit := max(base+2*maxBuffered, base+2*state+maxBuffered)
	if limit > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(limit)
}

// keepMemoryLimit sets the soft memory limit from maxBuffered and follows
// the live heap until ctx ends, unless GOMEMLIMIT is set.
// buffered reads the bytes the budget counts now.
func keepMemoryLimit(ctx context.Context, maxBuffered int, buffered func() int64, log zerolog.Logger) {
	if v, ok := os.LookupEnv("GOMEMLIMIT"); ok {
		log.Info().Str("gomemlimit", v).Msg("soft memory limit: GOMEMLIMIT from the environment, not streamshift's own")
		return
	}
	if maxBuffered <= 0 {
		return
	}
	samples := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/gc/heap/live:bytes"}}
	read := func() (total, live uint64) {
		metrics.Read(samples)
		for i, s := range samples {
			if s.Value.Kind() != metrics.KindUint64 {
				continue
			}
			if i == 0 {
				total = s.Value.Uint64()
			} else {
				live = s.Value.Uint64()
			}
		}
		return total, live
	}
	base, live := read()
	budget := uint64(maxBuffered)
	held := func() uint64 { return uint64(max(0, buffered())) }
	limit := softMemoryLimit(base, budget, live, held())
	debug.SetMemoryLimit(limit)
	// One line at start; the limit then follows the live heap silently.
	log.Info().Int64("soft_memory_limit_bytes", limit).Int("max_buffered_bytes", maxBuffered).
		Msg("soft memory limit: the idle size plus twice limits.max-buffered-bytes, raised as the groups' state grows (GOMEMLIMIT replaces it)")
	go func() {
		t := time.NewTicker(memoryLimitEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_, live := read()
				if next := softMemoryLimit(base, budget, live, held()); next != limit {
					limit = next
					debug.SetMemoryLimit(limit)
				}
			}
		}
	}()
}
