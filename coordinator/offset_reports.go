package coordinator

import "github.com/streamshift/streamshift/coordinator/streams"

// OffsetReports answers the offset reports of group id's members by member
// id (when each last reported, a classic member's task offset sums), read on
// the group's executor; nil when the group is not served here.
func (c *Coordinator) OffsetReports(id string, done func(map[string]streams.OffsetReport)) {
	c.run(id, func(s *groupQueue) {
		if s.group == nil {
			done(nil)
			return
		}
		done(streams.OffsetReports(s.group))
	}, func(*streams.CoordError) { done(nil) })
}
