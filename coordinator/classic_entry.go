package coordinator

import (
	"sync"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// A classic group request (JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
// and the offset requests of a migrating group) enters the coordinator once
// before its operation: EnterClassic decides, under the coordinator's one
// lock, whether the gate holds it and, if not, whether the coordinator has
// anything of the group to serve. The caller switches on the verdict, and
// takes a request that passed off the gate's count once it is answered
// (Answered, answeredOnce below); the gate's hold and drain are
// migration_state.go's.

// ClassicVerdict is what EnterClassic decided for a classic request.
type ClassicVerdict uint8

const (
	// ClassicForward: the coordinator has no state and no queued work for
	// the group (a queue kept only to count the group's classic requests
	// in flight has neither), so the request goes upstream at once instead
	// of through the group's queue only to learn ErrClassicNotServed. A
	// group created right after races the request as if it had been
	// answered ErrClassicNotServed.
	ClassicForward ClassicVerdict = iota
	// ClassicServe: ask the coordinator (through the translator); the
	// classic calls still answer ErrClassicNotServed for a group that is
	// not a streams group.
	ClassicServe
	// ClassicHeld: a takeover holds the group's classic requests (the
	// gate, migration_state.go); Wait gives the verdict once they are
	// released.
	ClassicHeld
)

// ClassicEntry is a classic request's passage through the gate. A request
// that passed (Serve, Forward) is counted in flight for the group until
// Answered, so a takeover that starts later waits for it whatever is done
// with it.
type ClassicEntry struct {
	Verdict ClassicVerdict
	// answered takes the request off the gate's count (answeredOnce); nil
	// for a request that is not counted.
	answered func()
	// c and s are the coordinator and the queue that hold a Held request.
	c *Coordinator
	s *groupQueue
}

// Answered takes a request that passed off the group's count of classic
// requests in flight; only the first call counts. Call it once the request
// is answered (at once if it is not forwarded).
func (e ClassicEntry) Answered() {
	if e.answered != nil {
		e.answered()
	}
}

// EnterClassic is the gate of a classic request of the group and the
// question whether the coordinator may serve it, in one step under the
// coordinator's lock: the request is counted in flight in the same CAS of
// the gate word as the held check (against Hold's), and a group that is not
// migrating costs no work on its queue. A Held entry's caller calls Wait.
func (c *Coordinator) EnterClassic(groupID string) ClassicEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if groupID == "" || c.closed {
		return ClassicEntry{Verdict: c.mayServeLocked(c.queues[groupID])}
	}
	s := c.queueLocked(groupID)
	for {
		w := s.gate.Load()
		if w&gateHeld != 0 {
			return ClassicEntry{Verdict: ClassicHeld, c: c, s: s}
		}
		if s.gate.CompareAndSwap(w, w+1) {
			return ClassicEntry{Verdict: c.mayServeLocked(s), answered: c.answeredOnce(s)}
		}
	}
}

// Wait gives a Held request its verdict once the group's held classic
// requests are released, in arrival order, on a goroutine of its own:
// resume may call the coordinator. The queue decides whether the request
// is still held (Release may have run since EnterClassic); if not, it
// enters the gate again.
func (e ClassicEntry) Wait(resume func(ClassicEntry)) {
	c, s := e.c, e.s
	c.run(s.id, func(q *groupQueue) {
		if st := q.mig(); q == s && st != nil && (st.held || st.releasing) {
			st.queue = append(st.queue, func() { resume(c.passHeld(s)) })
			return
		}
		go func() {
			if e := c.EnterClassic(s.id); e.Verdict == ClassicHeld {
				e.Wait(resume)
			} else {
				resume(e)
			}
		}()
	}, func(*streams.CoordError) {
		go func() { resume(c.passUncounted(s.id)) }()
	})
}

// passHeld lets a released request pass: counted in flight (the gate's held
// bit is still up while the release runs, so it does not enter again).
func (c *Coordinator) passHeld(s *groupQueue) ClassicEntry {
	s.gate.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	return ClassicEntry{Verdict: c.mayServeLocked(c.queues[s.id]), answered: c.answeredOnce(s)}
}

// passUncounted lets a request pass uncounted: its queue will never run it
// (the coordinator closed, the group unloading).
func (c *Coordinator) passUncounted(groupID string) ClassicEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ClassicEntry{Verdict: c.mayServeLocked(c.queues[groupID])}
}

// mayServeLocked: Serve when the coordinator has the group's state or work
// queued for it, else Forward. Under c.mu; it takes no group queue and
// allocates nothing.
func (c *Coordinator) mayServeLocked(s *groupQueue) ClassicVerdict {
	if s == nil {
		return ClassicForward
	}
	if s.group != nil {
		return ClassicServe
	}
	// A queue kept only by the gate's count (migration_state.go) holds
	// nothing to serve: the group's classic requests in flight upstream.
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running || len(s.queue) > 0 {
		return ClassicServe
	}
	return ClassicForward
}

// ClassicInFlight is how many classic requests of the group passed the
// gate and are not answered yet.
func (c *Coordinator) ClassicInFlight(groupID string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.queues[groupID]; s != nil {
		return int(s.gate.Load() & gateCount)
	}
	return 0
}

// answeredOnce is the answered of one request counted in flight on s: the
// first call takes it off the count; the last answer of a held group ends
// its drain (on its queue), that of an idle group drops the queue if
// nothing else keeps it.
func (c *Coordinator) answeredOnce(s *groupQueue) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			w := s.gate.Add(^uint64(0))
			switch {
			case w == 0:
				c.forgetIdle(s)
			case w&gateCount == 0 && w&gateHeld != 0:
				c.run(s.id, func(q *groupQueue) {
					if st := q.mig(); q == s && st != nil && st.held && s.gate.Load()&gateCount == 0 {
						if d := st.takeDrain(); d != nil {
							go d()
						}
					}
				}, nil)
			}
		})
	}
}

// forgetIdle drops a queue that holds no group, no work, no request in
// flight and no migration state, as drain does when its queue empties.
func (c *Coordinator) forgetIdle(s *groupQueue) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idle() && c.queues[s.id] == s {
		delete(c.queues, s.id)
	}
}

// idle: nothing keeps the queue; the caller holds c.mu and s.mu. s.group
// is read under c.mu as drain does; a migration state is on the gate word's
// kept bit, set and cleared with it.
func (s *groupQueue) idle() bool {
	return !s.running && len(s.queue) == 0 && s.group == nil && s.gate.Load() == 0
}
