package coordinator

import (
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// heldWork is a request of a group whose answer waits for the group to
// change (a classic JoinGroup waiting for its tasks, classic_join_hold.go).
// The executor keeps it as it keeps the group's timers: after each work of
// the group it runs again every held request that is ready (runHeld), and
// it answers them all when the group goes (failHeld).
type heldWork struct {
	// ready: may it run again now, on the group as it is (nil when the
	// group is gone)?
	ready func(g *streams.Group, now time.Time) bool
	run   func(*groupQueue)
	fail  func(*streams.CoordError)
}

// hold keeps w under key (one per member); a request already held under it
// is dropped, its caller answered by replaced.
func (s *groupQueue) hold(key string, w *heldWork, replaced func(old *heldWork)) {
	if old := s.held[key]; old != nil && replaced != nil {
		replaced(old)
	}
	if s.held == nil {
		s.held = map[string]*heldWork{}
	}
	s.held[key] = w
}

// runHeld runs again, after a work of the group, every held request that is
// ready; a run may hold it again.
func (c *Coordinator) runHeld(s *groupQueue) {
	if len(s.held) == 0 {
		return
	}
	now := c.clock.Now()
	for key, w := range s.held {
		if !w.ready(s.group, now) {
			continue
		}
		delete(s.held, key)
		w.run(s)
	}
}

// failHeld answers every held request of a group this coordinator no longer
// serves (closed, unloaded) with err.
func (s *groupQueue) failHeld(err *streams.CoordError) {
	for key, w := range s.held {
		delete(s.held, key)
		w.fail(err)
	}
}
