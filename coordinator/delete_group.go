package coordinator

import (
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// DeleteGroup deletes a streams group for DeleteGroups: only an Empty group
// can go (NON_EMPTY_GROUP otherwise, GROUP_ID_NOT_FOUND if there is none).
// done gets nil or a *kerr.Error once the tombstones are in the log. Its
// committed offsets stay on the upstream; deleting them is the caller's part.
func (c *Coordinator) DeleteGroup(groupID string, done func(error)) {
	c.run(groupID, func(s *shard) {
		g := s.group
		if g == nil {
			done(kerr.GroupIDNotFound)
			return
		}
		if g.State() != streams.GroupEmpty {
			done(kerr.NonEmptyGroup)
			return
		}
		ch := c.newChange(s)
		ch.TombstoneGroup(g.Ownership != nil)
		if err := c.commit(s, ch); err != nil {
			done(kerr.CoordinatorNotAvailable)
			return
		}
		s.stopTimers()
		s.group = nil
		done(nil)
	}, func(e *streams.CoordError) { done(e) })
}
