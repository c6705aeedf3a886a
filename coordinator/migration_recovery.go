package coordinator

import (
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// A group's restart recovery (package migration's Recovery decides what it
// does: recovery.go there) is part of its migration state, on its executor:
// its held JoinGroups, the stale member ids, where it stands and its timer
// on the coordinator's Clock. The gate word's recovery bit says, off the
// queue, whether the group has one, so that the JoinGroups of the groups
// that have none (all but those few) are forwarded without a queue hop, and
// a streams join of them is not watched.

// HasRecovery reports, without waiting for the group's queue, whether the
// group has a restart recovery (under way, or handed back and still
// keeping its stale member ids).
func (c *Coordinator) HasRecovery(groupID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.queues[groupID]
	return s != nil && s.gate.Load()&gateRecovery != 0
}

// WithRecovery runs f on the group's executor with the group's recovery
// (nil if it has none); what f returns is the group's recovery from then on
// (nil: none; a replaced one's timer stops). f must not block: what waits
// for I/O or the coordinator goes on a goroutine of its own. fail, if not
// nil, is called instead if f will never run (the coordinator closed, the
// group unloading).
func (c *Coordinator) WithRecovery(groupID string, f func(*RestartRecovery) *RestartRecovery, fail func()) {
	var onFail func(*streams.CoordError)
	if fail != nil {
		onFail = func(*streams.CoordError) { fail() }
	}
	c.run(groupID, func(s *groupQueue) { s.setRecovery(f(s.recovery())) }, onFail)
}

// ArmRecovery arms rec's timer (replacing the one it had): after d on the
// coordinator's clock, f runs on the group's executor as WithRecovery's,
// if rec is still the group's recovery then. Call it from WithRecovery's
// or ArmRecovery's f.
func (c *Coordinator) ArmRecovery(groupID string, rec *RestartRecovery, d time.Duration, f func(*RestartRecovery) *RestartRecovery) {
	if rec.timer != nil {
		rec.timer.Stop()
	}
	var timer Timer
	timer = c.clock.AfterFunc(d, func() {
		c.run(groupID, func(s *groupQueue) {
			if s.recovery() == rec && rec.timer == timer {
				rec.timer = nil
				s.setRecovery(f(rec))
			}
		}, nil)
	})
	rec.timer = timer
}

func (s *groupQueue) recovery() *RestartRecovery {
	if s.mig() == nil {
		return nil
	}
	return s.mig().recovery
}

// setRecovery makes rec the group's recovery. Under exec.
func (s *groupQueue) setRecovery(rec *RestartRecovery) {
	old := s.recovery()
	if old != nil && old != rec && old.timer != nil {
		old.timer.Stop()
	}
	if rec == nil {
		if s.mig() != nil {
			s.mig().recovery = nil
			s.gate.And(^gateRecovery)
			s.endMigrationIfIdle()
		}
		return
	}
	s.migState().recovery = rec
	s.gate.Or(gateRecovery)
}
