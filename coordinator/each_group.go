package coordinator

import (
	"sync"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// eachGroup visits every group queue on its own goroutine (run), collects
// what visit returns for it (ok false: nothing) and calls done once with
// all of it, after the last visit. A group closed or unloaded meanwhile
// gives nothing. The order of out is the visits' order: done sorts it.
func eachGroup[T any](c *Coordinator, visit func(id string, s *groupQueue) (T, bool), done func(out []T)) {
	c.mu.Lock()
	ids := make([]string, 0, len(c.queues))
	for id := range c.queues {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	var (
		mu      sync.Mutex
		out     []T
		pending = len(ids) + 1
	)
	finish := func() {
		pending--
		if pending == 0 {
			done(out)
		}
	}
	for _, id := range ids {
		c.run(id, func(s *groupQueue) {
			mu.Lock()
			defer mu.Unlock()
			if v, ok := visit(id, s); ok {
				out = append(out, v)
			}
			finish()
		}, func(*streams.CoordError) {
			mu.Lock()
			defer mu.Unlock()
			finish()
		})
	}
	mu.Lock()
	finish()
	mu.Unlock()
}
