package coordinator

import (
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// What the forwarded classic requests of a group showed (package
// migration's ClassicObserver feeds it, a takeover reads it), on the
// group's executor: the migration state's observed members. A takeover
// needs what DescribeGroups does not tell (each member's timeouts, its
// generation, when the upstream last renewed its session, the connection
// of its latest request), so every classic group forwarded upstream is
// observed, migrating or not.
//
// No queue hop for a group that is not migrating: an observation is a
// work of the group's executor, but when the executor is idle (nothing
// running, nothing queued: a classic group upstream) the caller runs it in
// its turn (runIdle), under the executor's lock, without a queue crossing
// or a goroutine. Behind queued work it is queued, fire-and-forget.
//
// Memory stays bounded: an observed member is dropped once twice its
// session timeout (Kafka Streams' default when not seen) has passed since
// its latest observation (armObservedExpiry, one timer per group on the
// coordinator's Clock), by when the upstream has expired it too and a
// takeover would not find it; a group with no member left drops its
// observed state, and its queue goes when nothing else keeps it. So what
// is kept is the classic members the upstream still holds whose requests
// pass through here (the observer's map kept every group and member ever
// seen, for good).

// ClassicObservation is what one classic request, or the upstream's
// answer to it, showed of one member.
type ClassicObservation struct {
	Member string
	// At is when it was seen, on the coordinator's clock.
	At time.Time
	// SessionMs and RebalanceMs: a JoinGroup's timeouts (0: not a join).
	SessionMs, RebalanceMs int32
	// Generation: the upstream accepted it (HaveGeneration).
	Generation     int32
	HaveGeneration bool
	// AliveIfKnown: the upstream renewed the session of the member, if
	// it was observed before (a Heartbeat answered REBALANCE_IN_PROGRESS,
	// or a request held by a takeover's gate, which the upstream would have
	// taken as one). A generation renews it too, and records the member.
	AliveIfKnown bool
	// Conn, Closed and ClosedAt (when it closed): the connection of a JoinGroup, SyncGroup or
	// Heartbeat (Closed nil: not recorded).
	Conn     uint64
	Closed   <-chan struct{}
	ClosedAt func() time.Time
	// Rejoin: a JoinGroup or SyncGroup held by a takeover's gate
	// (WatchClassicRejoin).
	Rejoin bool
	// Joined: a JoinGroup answered without error (Generation is its
	// generation); GenerationMembers: the members of that generation, as
	// the answer to its leader lists them. Synced: a SyncGroup answered
	// without error. A handed-back group's settle reads them
	// (handback_settle.go).
	Joined, Synced    bool
	GenerationMembers []string
}

// ObserveClassic records an observation of a member of the group, on the
// group's executor, without waiting for it (runIdle).
func (c *Coordinator) ObserveClassic(groupID string, ob ClassicObservation) {
	if groupID == "" || (ob.Member == "" && !ob.Rejoin) {
		return // a first JoinGroup held has no member id: only its rejoin counts
	}
	c.runIdle(groupID, func(s *groupQueue) { c.observe(s, ob) })
}

// observe applies ob. Under exec.
func (c *Coordinator) observe(s *groupQueue, ob ClassicObservation) {
	if s.mig() != nil && s.mig().settling != nil {
		c.noteHandBackSettle(s, ob)
	}
	if ob.Rejoin && s.mig() != nil {
		if w := s.mig().rejoin; w != nil && w.state.CompareAndSwap(0, 1) {
			// Done: the takeover gives up and may never stop it.
			s.mig().rejoin = nil
			go w.f()
		}
	}
	if ob.Member == "" {
		s.endMigrationIfIdle()
		return
	}
	var og *observedGroup
	if s.mig() != nil {
		og = s.mig().observed
	}
	m := og.member(ob.Member)
	known := m != nil
	if !known {
		if !ob.HaveGeneration && ob.SessionMs <= 0 && ob.Closed == nil {
			return // nothing to record of a member not observed
		}
		og = s.migState().observedGroup()
		m = &ObservedClassicMember{}
		og.members[ob.Member] = m
	}
	m.seen = ob.At
	if (ob.AliveIfKnown && known) || ob.HaveGeneration {
		m.LastHeartbeat = ob.At
	}
	if ob.SessionMs > 0 {
		m.SessionMs, m.RebalanceMs = ob.SessionMs, ob.RebalanceMs
	}
	if ob.HaveGeneration {
		m.Generation, m.HaveGeneration = ob.Generation, true
	}
	if ob.Closed != nil {
		m.Conn, m.Closed, m.ClosedAt = ob.Conn, ob.Closed, ob.ClosedAt
	}
	if og.expiry == nil {
		c.armObservedExpiry(s, og)
	}
}

// noteHandBackSettle feeds a forwarded classic answer to the handed-back
// group's wait; once every member of the broker's generation has its
// assignment the wait ends and EventClassicGroupSynced is told. Under
// exec.
func (c *Coordinator) noteHandBackSettle(s *groupQueue, ob ClassicObservation) {
	h := s.mig().settling
	if !h.note(ob.Member, ob.Generation, ob.Joined, ob.Synced, ob.GenerationMembers) {
		return
	}
	h.stop()
	s.mig().settling = nil
	c.logger.Info().Str("group", s.id).Int32("generation", h.generation).Int("members", len(h.synced)).
		Msg("hand-back settled: every member of the broker's classic generation has its assignment")
	if c.events != nil {
		c.events.GroupEvent(h.syncedEvent(s.id, c.clock.Now()))
	}
	s.endMigrationIfIdle()
}

// observedGroup returns the state's observed group, new if none.
func (st *migrationState) observedGroup() *observedGroup {
	if st.observed == nil {
		st.observed = &observedGroup{members: map[string]*ObservedClassicMember{}}
	}
	return st.observed
}

// armObservedExpiry arms og's timer at its earliest member expiry. Under
// exec.
func (c *Coordinator) armObservedExpiry(s *groupQueue, og *observedGroup) {
	var first time.Time
	for _, m := range og.members {
		if at := m.expiresAt(); first.IsZero() || at.Before(first) {
			first = at
		}
	}
	var timer Timer
	timer = c.clock.AfterFunc(first.Sub(c.clock.Now()), func() {
		c.run(s.id, func(q *groupQueue) {
			if q != s || q.mig() == nil || q.mig().observed != og || og.expiry != timer {
				return
			}
			og.expiry = nil
			now := c.clock.Now()
			for id, m := range og.members {
				if !m.expiresAt().After(now) {
					delete(og.members, id)
				}
			}
			if len(og.members) == 0 {
				q.mig().observed = nil
				q.endMigrationIfIdle()
				return
			}
			c.armObservedExpiry(q, og)
		}, nil)
	})
	og.expiry = timer
}

// ObservedClassicMembers returns a copy of what was observed of the
// group's members, once the observations made before it are applied. It
// waits for the group's queue: not to be called on it.
func (c *Coordinator) ObservedClassicMembers(groupID string) map[string]ObservedClassicMember {
	ch := make(chan map[string]ObservedClassicMember, 1)
	c.run(groupID, func(s *groupQueue) {
		out := map[string]ObservedClassicMember{}
		if s.mig() != nil && s.mig().observed != nil {
			for id, m := range s.mig().observed.members {
				out[id] = *m
			}
		}
		ch <- out
	}, func(*streams.CoordError) { ch <- nil })
	return <-ch
}

// ForgetClassicObserved drops what was observed of the group (a takeover
// made it a streams group: its members are the coordinator's now).
func (c *Coordinator) ForgetClassicObserved(groupID string) {
	c.run(groupID, func(s *groupQueue) {
		if st := s.mig(); st != nil && st.observed != nil {
			st.observed.stop()
			st.observed = nil
			s.endMigrationIfIdle()
		}
	}, nil)
}

// WatchClassicRejoin calls f (once, on a goroutine of its own) when a
// JoinGroup or SyncGroup of the group is held at the gate (an observation
// with Rejoin), until the returned stop is called; stop reports whether f
// was not called. The watch is set in the group's queue order: a Hold
// queued after it is watched.
func (c *Coordinator) WatchClassicRejoin(groupID string, f func()) (stop func() bool) {
	w := &rejoinWatch{f: f}
	c.run(groupID, func(s *groupQueue) { s.migState().rejoin = w }, nil)
	return func() bool {
		stopped := w.state.CompareAndSwap(0, 2) || w.state.Load() == 2
		c.run(groupID, func(s *groupQueue) {
			if st := s.mig(); st != nil && st.rejoin == w {
				st.rejoin = nil
				s.endMigrationIfIdle()
			}
		}, nil)
		return stopped
	}
}

// runIdle runs f as work of the group's executor: at once on the caller's
// goroutine if the executor is idle (nothing running, nothing queued), as
// the next work of the queue would run, else queued behind the group's
// work. Either way in order with the group's other work and under its
// lock. A closed coordinator or an unloading group drops f.
func (c *Coordinator) runIdle(groupID string, f func(*groupQueue)) {
	c.mu.Lock()
	if c.closed || c.inline {
		c.mu.Unlock()
		c.run(groupID, f, nil)
		return
	}
	s := c.queueLocked(groupID)
	if s.unloading {
		c.mu.Unlock()
		return
	}
	s.mu.Lock()
	if s.running || len(s.queue) > 0 {
		s.mu.Unlock()
		c.mu.Unlock()
		c.run(groupID, f, nil)
		return
	}
	// The caller is the queue's runner for this one work: what is queued
	// meanwhile waits, and is drained after it.
	s.running = true
	s.mu.Unlock()
	c.mu.Unlock()
	c.do(s, f)
	c.mu.Lock()
	s.mu.Lock()
	if len(s.queue) > 0 {
		s.mu.Unlock()
		c.mu.Unlock()
		go c.drain(s)
		return
	}
	c.idleLocked(s)
	s.mu.Unlock()
	c.mu.Unlock()
}
