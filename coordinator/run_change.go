package coordinator

import (
	"fmt"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// runChange runs op in a change of its own on the group's executor and
// answers done with what op returned once the change is committed (its
// records durable). A change that could not be committed answers
// fail(error wrapping appendFailed's code: NOT_COORDINATOR once this
// instance lost the group's partition, else COORDINATOR_NOT_AVAILABLE), and a group the executor
// cannot run (closed, unloading) answers fail(its CoordError): what
// serves, the caller's op only says.
func runChange[R any](c *Coordinator, group, what string, op func(*streams.Change) R, fail func(error) R, done func(R)) {
	c.run(group, func(s *groupQueue) {
		ch := c.newChange(s)
		res := op(ch)
		if err := c.finish(s, ch); err != nil {
			res = fail(fmt.Errorf("%s %s: %v: %w", what, group, err, appendFailed(err)))
		}
		done(res)
	}, func(e *streams.CoordError) { done(fail(e)) })
}
