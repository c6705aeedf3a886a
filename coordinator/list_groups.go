package coordinator

import (
	"sort"
	"strings"
	"sync"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// ListedGroup is a streams group as ListGroups reports it: protocol type and
// group type are both "streams".
type ListedGroup struct {
	GroupID string
	State   streams.GroupState
}

// ListGroups reports the streams groups, filtered by state names as in
// ListGroups v4+ (lower-case, "not_ready"; case-insensitive; empty: all),
// sorted by id; done is called once with the result.
func (c *Coordinator) ListGroups(states []string, done func([]ListedGroup)) {
	want := map[string]bool{}
	for _, s := range states {
		want[strings.ToLower(s)] = true
	}
	c.mu.Lock()
	ids := make([]string, 0, len(c.queues))
	for id := range c.queues {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	var (
		mu      sync.Mutex
		out     []ListedGroup
		pending = len(ids) + 1
	)
	finish := func() {
		pending--
		if pending == 0 {
			sort.Slice(out, func(i, j int) bool { return out[i].GroupID < out[j].GroupID })
			done(out)
		}
	}
	for _, id := range ids {
		c.run(id, func(s *groupQueue) {
			mu.Lock()
			defer mu.Unlock()
			if g := s.group; g != nil {
				st := g.State()
				if len(want) == 0 || want[st.StateFilterName()] {
					out = append(out, ListedGroup{GroupID: g.ID, State: st})
				}
			}
			finish()
		}, func(*streams.CoordError) {
			// A group this coordinator closed or unloaded is not listed.
			mu.Lock()
			defer mu.Unlock()
			finish()
		})
	}
	mu.Lock()
	finish()
	mu.Unlock()
}
