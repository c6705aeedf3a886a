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
	c.run(groupID, func(s *groupQueue) {
		ch := c.newChange(s)
		if err := ch.DeleteGroup(); err != nil {
			c.finish(s, ch) // it wrote nothing
			done(err)
			return
		}
		if err := c.finish(s, ch); err != nil {
			done(kerr.CoordinatorNotAvailable)
			return
		}
		s.stopTimers()
		s.group = nil
		done(nil)
	}, func(e *streams.CoordError) { done(e) })
}
