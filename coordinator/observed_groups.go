package coordinator

import (
	"sort"
	"sync"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// ObservedClassicGroups reports the groups this coordinator does not serve
// whose classic members it observes (classic on the broker, their requests
// forwarded through here: migration_observed.go), sorted; done is called
// once. The status page lists them from the first classic join.
func (c *Coordinator) ObservedClassicGroups(done func([]string)) {
	c.mu.Lock()
	ids := make([]string, 0, len(c.queues))
	for id := range c.queues {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	var (
		mu      sync.Mutex
		out     []string
		pending = len(ids) + 1
	)
	finish := func() {
		pending--
		if pending == 0 {
			sort.Strings(out)
			done(out)
		}
	}
	for _, id := range ids {
		c.run(id, func(s *groupQueue) {
			mu.Lock()
			defer mu.Unlock()
			if s.group == nil && s.mig != nil && s.mig.observed != nil && len(s.mig.observed.members) > 0 {
				out = append(out, id)
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
