package coordinator

import (
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/internal/backoff"
)

// A migrating group's state lives on its executor (docs/fast-roll.md §4):
// the groupQueue's hook (mig), read and changed only by work of that
// queue, like barrier and timers. The runtime sees it only through the
// hook's two calls (queueHook: worked after each work, gone when the group
// goes), so this file uses the runtime's and none of the runtime's files
// uses this one. The one exception is the request path's check, the
// queue's gate word, so that a classic request of a group that is not
// migrating pays no queue hop. Here: the gate word (counted up by
// EnterClassic, with whether the group is served, under one lock, and down
// by its answer, classic.go) and the gate's hold and drain (HoldClassic and ReleaseClassic: the group's
// classic requests during a takeover) and the end of the state
// when the group is idle; beside it, on the same state, the pacing of its
// takeover attempts (takeover_pacing.go), the classic observer
// (migration_observed.go), the restart recovery (migration_recovery.go),
// the hand-back (migration_handback.go, migration_handoff.go). A held
// classic JoinGroup is not here: it is an output of its operation
// (streams.Hold), kept on the queue until a change releases it
// (classic.go, streams/hold.go).

// gateHeld is the gate word's held bit: the group's requests are held, or
// its held requests are being released (arrivals queue behind them, so the
// arrival order holds). The bits below it count the group's requests that
// passed the gate and are not answered yet (in flight).
const gateHeld = uint64(1) << 63

// gateKept is the gate word's bit of a group with a migration state (mig
// not nil): its queue is kept when it drains. gateCount masks the count.
const (
	gateKept  = uint64(1) << 62
	gateCount = gateRecovery - 1
)

// gateRecovery is the gate word's bit of a group with a restart recovery
// (migrationState.recovery not nil), set and cleared with it on the queue.
const gateRecovery = uint64(1) << 61

// migrationState is one migrating group's state; nil when the group is not
// migrating. Guarded by the queue's exec.
type migrationState struct {
	// held: Hold was called and Release not yet.
	held bool
	// releasing: a batch of held requests runs after a Release.
	releasing bool
	// queue is the held requests, in arrival order.
	queue []func()
	// drained is the running takeover's wait for the group's forwarded
	// requests, bounded by drainTimer; nil when none waits.
	drained    func()
	drainTimer Timer
	// pace is the backoff of the group's takeover attempts after one
	// failed (takeover_pacing.go); nil when none failed lately.
	pace *takeoverPace
	// handOff is the hand-back's run and last steps and the takeover in
	// progress (migration_handoff.go).
	handOff
	// observed and rejoin: what the group's forwarded classic requests
	// showed, and a takeover's watch for a rejoin (migration_observed.go);
	// recovery: its restart recovery (migration_recovery.go).
	observed *observedGroup
	rejoin   *rejoinWatch
	recovery *RestartRecovery
}

// takeoverPace: no attempt of the group before next; retry gives the wait
// after its next failure (TakeoverBackoffInitial doubling up to
// TakeoverBackoffMax, jittered). forget drops it once the group was quiet for a
// whole maximum backoff after next (its members gave up, or the group went
// elsewhere), so only groups failing now keep one.
type takeoverPace struct {
	next   time.Time
	retry  backoff.Backoff
	forget Timer
}

func (st *migrationState) stopPace() {
	if p := st.pace; p != nil && p.forget != nil {
		p.forget.Stop()
	}
	st.pace = nil
}

// migState returns the group's migration state, new if it had none. Under
// exec.
func (s *groupQueue) migState() *migrationState {
	st := s.mig()
	if st == nil {
		st = &migrationState{}
		s.hook = st
		s.gate.Or(gateKept)
	}
	return st
}

// mig is the group's migration state, nil when it is not migrating. Under
// exec.
func (s *groupQueue) mig() *migrationState {
	st, _ := s.hook.(*migrationState)
	return st
}

// worked is the migration state's part after each work of the group
// (queueHook): a state left with nothing in it ends.
func (st *migrationState) worked(s *groupQueue) { s.endMigrationIfIdle() }

// gone is its part when the group goes from this coordinator (queueHook):
// the state ends (dropMigration).
func (st *migrationState) gone(s *groupQueue) (tell func()) { return s.dropMigration() }

// endMigrationIfIdle drops the group's migration state once nothing is
// left in it. Under exec.
func (s *groupQueue) endMigrationIfIdle() {
	st := s.mig()
	if st != nil && !st.held && !st.releasing && len(st.queue) == 0 && st.drained == nil && st.pace == nil && st.handOff.idle() &&
		st.observed == nil && st.rejoin == nil && st.recovery == nil {
		s.hook = nil
		s.gate.And(^gateKept)
	}
}

// takeDrain ends the drain wait, if any, and returns its callback.
func (st *migrationState) takeDrain() func() {
	d := st.drained
	st.drained = nil
	if st.drainTimer != nil {
		st.drainTimer.Stop()
		st.drainTimer = nil
	}
	return d
}

// HoldClassic holds the group's classic requests from its turn on the
// group's queue, and calls drained (on a goroutine of its own) once every
// request of the group that passed the gate before has its answer, or
// drainTimeout has passed on the coordinator's clock (a forwarded request
// whose client connection closed never reports its answer).
func (c *Coordinator) HoldClassic(groupID string, drainTimeout time.Duration, drained func()) {
	c.run(groupID, func(s *groupQueue) {
		st := s.migState()
		st.held = true
		w := s.gate.Or(gateHeld)
		st.takeDrain() // a previous Hold's wait, never answered
		if w&gateCount == 0 {
			go drained()
			return
		}
		st.drained = drained
		// A timer fires only its own wait, never a later Hold's.
		var timer Timer
		timer = c.clock.AfterFunc(drainTimeout, func() {
			c.run(groupID, func(q *groupQueue) {
				if q != s || q.mig() != st || st.drainTimer != timer || st.drained == nil {
					return
				}
				d := st.takeDrain()
				c.logger.Warn().Str("group", groupID).Dur("after", drainTimeout).Msg("takeover: drain timed out (a forwarded request never answered); going on")
				go d()
			}, nil)
		})
		st.drainTimer = timer
		c.logger.Info().Str("group", groupID).Int("in_flight", int(w&gateCount)).Msg("takeover: draining forwarded classic requests")
	}, func(*streams.CoordError) { go drained() })
}

// ReleaseClassic runs the group's held classic requests, in arrival
// order, through the normal path (which then finds the group here, or
// upstream), on a goroutine of their own: they need the coordinator.
func (c *Coordinator) ReleaseClassic(groupID string) {
	c.run(groupID, func(s *groupQueue) {
		st := s.mig()
		if st == nil || !st.held {
			return
		}
		st.held = false
		st.takeDrain()
		if st.releasing {
			return
		}
		st.releasing = true
		c.releaseHeld(s)
	}, nil)
}

// releaseHeld runs the next batch of the group's held requests, or, with
// none left or the group held again, ends the release. On the group's
// queue.
func (c *Coordinator) releaseHeld(s *groupQueue) {
	st := s.mig()
	if st.held || len(st.queue) == 0 {
		st.releasing = false
		if !st.held {
			s.gate.And(^gateHeld)
			s.endMigrationIfIdle()
		}
		return
	}
	batch := st.queue
	st.queue = nil
	go func() {
		for _, f := range batch {
			f()
		}
		c.run(s.id, func(q *groupQueue) {
			if q == s && q.mig() == st {
				c.releaseHeld(q)
			}
		}, nil)
	}()
}

// dropMigration ends the migration state of a group going away (unloaded,
// the coordinator closed): a waiting drain goes on and the held requests
// run, finding the group gone. Under exec.
func (s *groupQueue) dropMigration() (tell func()) {
	st := s.mig()
	if st == nil {
		return func() {}
	}
	q := st.queue
	s.hook = nil
	s.gate.And(^(gateHeld | gateKept | gateRecovery))
	d := st.takeDrain()
	st.stopPace()
	handOff := st.handOff.drop()
	st.observed.stop()
	for _, h := range st.recovery.stop() {
		if !h.Gone() {
			q = append(q, h.Rerun)
		}
	}
	return func() {
		handOff()
		if d != nil {
			go d()
		}
		if len(q) > 0 {
			go func() {
				for _, f := range q {
					f()
				}
			}()
		}
	}
}
