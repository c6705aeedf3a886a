package coordinator

import (
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// A hand-back driver's per-group state (package migration's HandBack) is the
// group's migration state (migration_state.go), on its queue: the run in
// progress with the JoinGroups its barrier holds, when the group was last
// checked, and the hand-back's last steps (from the anchor's leave to a
// grace after the held joins' answers) during which a streams join waits.
// The driver's flow is its own (BeginHandBack, FinishHandBack, the anchor,
// the forwarding); only where it keeps its state is here.

// StartHandBackRun starts a hand-back run of a group served here whose
// members are all classic (the condition of a hand-back), unless one is on
// or the group was checked less than every ago (on the coordinator's
// clock), and calls start with it, on the group's queue (start must not
// block). The run stays the group's until EndHandBackRun. A group without a
// migration state is checked on this work alone (it reads the group here,
// no further hop); what it checked is kept only with a migration state.
func (c *Coordinator) StartHandBackRun(groupID string, every time.Duration, start func(*HandBackRun)) {
	c.run(groupID, func(s *groupQueue) {
		now := c.clock.Now()
		st := s.mig()
		if st != nil && (st.handBack != nil || now.Sub(st.handBackChecked) < every) {
			return
		}
		if st != nil {
			st.handBackChecked = now
		}
		if !classicOnly(s.group) {
			return
		}
		st = s.migState()
		st.handBackChecked = now
		run := &HandBackRun{}
		st.handBack = run
		start(run)
	}, nil)
}

// classicOnly: the group is served here and its members are all classic,
// the condition of a hand-back.
func classicOnly(g *streams.Group) bool {
	return g != nil && len(g.Members) > 0 && !streams.HasStreamsMember(g)
}

// HoldForHandBack keeps a JoinGroup the coordinator held at the group's
// hand-back barrier in the group's run, in arrival order: held(true). With
// no run of the group on (a restarted proxy, the run ended, the group gone
// from here), held(false): the caller finishes the join itself.
func (c *Coordinator) HoldForHandBack(groupID string, j HeldJoin, held func(bool)) {
	c.run(groupID, func(s *groupQueue) {
		st := s.mig()
		if st == nil || st.handBack == nil {
			held(false)
			return
		}
		st.handBack.held = append(st.handBack.held, j)
		held(true)
	}, func(*streams.CoordError) { held(false) })
}

// EndHandBackRun ends the group's run and gives its held joins to done,
// in arrival order. A run the group no longer has (it went away, and its
// joins were served again then) gives none.
func (c *Coordinator) EndHandBackRun(groupID string, run *HandBackRun, done func([]HeldJoin)) {
	c.run(groupID, func(s *groupQueue) {
		st := s.mig()
		if st == nil || st.handBack != run {
			done(nil)
			return
		}
		held := run.held
		run.held = nil
		st.handBack = nil
		s.endMigrationIfIdle()
		done(held)
	}, func(*streams.CoordError) { done(nil) })
}

// AnchorLeftForHandBack: the group's anchor left the upstream group for a
// hand-back, so the group is neither here nor formed upstream: a streams
// join waits (WaitHandBack) until HandBackDone's grace has passed. A
// hand-back's last steps already on are ended first (their joins go on).
// then is called, on a goroutine of its own, once the group's state says
// so (or the group is not served here any more), so a join that comes
// after it waits.
func (c *Coordinator) AnchorLeftForHandBack(groupID string, then func()) {
	c.run(groupID, func(s *groupQueue) {
		st := s.migState()
		if old := st.handingBack; old != nil {
			if old.grace != nil {
				old.grace.Stop()
			}
			close(old.done)
		}
		st.handingBack = &handingBack{done: make(chan struct{})}
		go then()
	}, func(*streams.CoordError) { go then() })
}

// HandBackDone: the hand-back's held joins were answered upstream (or given
// up); streams joins of the group go on after grace, on the coordinator's
// clock, so that the classic members' rejoins reach the upstream group
// first.
func (c *Coordinator) HandBackDone(groupID string, grace time.Duration) {
	c.run(groupID, func(s *groupQueue) {
		st := s.mig()
		if st == nil || st.handingBack == nil || st.handingBack.grace != nil {
			return
		}
		hb := st.handingBack
		c.logger.Info().Str("group", groupID).Msg("hand-back done: the classic group is the broker's again")
		hb.grace = c.clock.AfterFunc(grace, func() {
			c.run(groupID, func(q *groupQueue) {
				if q != s || q.mig() != st || st.handingBack != hb {
					return // ended already (a later leave, or the group went away)
				}
				st.handingBack = nil
				close(hb.done)
				q.endMigrationIfIdle()
			}, nil)
		})
	}, nil)
}

// WaitHandBack blocks while the group is in a hand-back's last steps
// (AnchorLeftForHandBack until HandBackDone's grace has passed), at most
// until cancel is closed. A group without a migration state costs no work
// on its queue.
func (c *Coordinator) WaitHandBack(groupID string, cancel <-chan struct{}) {
	if !c.migrating(groupID) {
		return
	}
	ch := make(chan chan struct{}, 1)
	c.run(groupID, func(s *groupQueue) {
		if st := s.mig(); st != nil && st.handingBack != nil {
			ch <- st.handingBack.done
			return
		}
		ch <- nil
	}, func(*streams.CoordError) { ch <- nil })
	var done chan struct{}
	select {
	case done = <-ch:
	case <-cancel:
		return
	}
	if done == nil {
		return
	}
	select {
	case <-done:
	case <-cancel:
	}
}

// migrating reports whether the group has a migration state now (the gate
// word's kept bit), off its queue.
func (c *Coordinator) migrating(groupID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.queues[groupID]
	return s != nil && s.gate.Load()&gateKept != 0
}

// armHandBackSettle starts the handed-back group's wait for its classic
// generation on the broker (handback_settle.go), replacing an earlier
// one. Under exec.
func (c *Coordinator) armHandBackSettle(s *groupQueue) {
	st := s.migState()
	st.settling.stop()
	h := &handBackSettle{}
	st.settling = h
	h.giveUp = c.clock.AfterFunc(handBackSettleMax, func() {
		c.run(s.id, func(q *groupQueue) {
			if q != s || q.mig() == nil || q.mig().settling != h {
				return
			}
			q.mig().settling = nil
			q.endMigrationIfIdle()
		}, nil)
	})
}
