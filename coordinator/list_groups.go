package coordinator

import (
	"sort"
	"strings"

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
	// A group this coordinator closed or unloaded is not listed.
	eachGroup(c, func(_ string, s *groupQueue) (ListedGroup, bool) {
		g := s.group
		if g == nil {
			return ListedGroup{}, false
		}
		st := g.State()
		return ListedGroup{GroupID: g.ID, State: st}, len(want) == 0 || want[st.StateFilterName()]
	}, func(out []ListedGroup) {
		sort.Slice(out, func(i, j int) bool { return out[i].GroupID < out[j].GroupID })
		done(out)
	})
}
