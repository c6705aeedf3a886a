package coordinator

import (
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// groupQueue is one group's executor: its serial queue of work and the
// state only that work touches. (It is not Kafka's shard: a shard there is a
// partition of the group log, which here is partition_table.go's.)
type groupQueue struct {
	id      string
	mu      sync.Mutex // guards queue and running
	queue   []work
	running bool
	exec    sync.Mutex // held while work runs
	group   *streams.Group
	// unloading: Unload runs; new work is answered NOT_COORDINATOR
	// (guarded by the coordinator's mu).
	unloading bool
	// barrier is the hand-back whose end is still to be told
	// (classic_handback.go); guarded by exec.
	barrier *streams.HandBack
	// timers are the group's pending timers (timers.go); guarded by exec.
	timers map[streams.TimerKey]*groupTimer
	// watches stop the goroutines watching client connections for the
	// group, by connection (timers.go, watchConn); guarded by exec.
	watches map[<-chan struct{}]chan struct{}
	// hook is what the group keeps on its queue while it migrates (its
	// migration state, migration_state.go), nil when it is not migrating;
	// guarded by exec. gate is the one part read off the queue: the
	// request path's held bit and in-flight count, and whether the queue
	// is kept when it drains.
	hook queueHook
	gate atomic.Uint64
	// held are the answers of the group's requests an operation held
	// (streams.Hold), by key; released are those a change released
	// (streams.Change.Released), run again after the work (runReleased).
	// The executor never looks inside them. Guarded by exec.
	held     map[streams.HoldKey]heldAnswer
	released []heldAnswer
	// stateSeen is what the group-state event last told (events.go).
	// Guarded by exec.
	stateSeen groupStateSeen
}

// queueHook is what a migrating group keeps on its queue, behind two
// calls: the runtime knows of it only that it is told after each work of
// the group and when the group goes.
type queueHook interface {
	// worked: a work of the group ran. Under exec.
	worked(s *groupQueue)
	// gone: the group goes from this coordinator (unloaded, or the
	// coordinator closed). Under exec; tell runs once exec is let go.
	gone(s *groupQueue) (tell func())
}

// hookGone tells the group's hook, if any, that the group goes.
func (s *groupQueue) hookGone() (tell func()) {
	if s.hook == nil {
		return func() {}
	}
	return s.hook.gone(s)
}

// heldAnswer answers a held request: with err when the group goes from
// this coordinator, or (err nil) by running the request again.
type heldAnswer func(s *groupQueue, err error)

// work is one operation queued on a group's executor. fail answers its
// caller instead when the work will never run: the coordinator closed
// (COORDINATOR_NOT_AVAILABLE) or the group was unloaded (NOT_COORDINATOR),
// as Kafka's runtime fails the pending events of a closed or unloaded
// shard (a partition of its log). The coordinator's own work (timers, topic creation results) has
// nobody to answer and passes a nil fail.
type work struct {
	run  func(*groupQueue)
	fail func(*streams.CoordError)
}

func (w work) answer(err *streams.CoordError) {
	if w.fail != nil {
		w.fail(err)
	}
}

func shuttingDown(groupID string) *streams.CoordError {
	return streams.Errorf(kerr.CoordinatorNotAvailable, "The coordinator is shutting down; group %s is not served.", groupID)
}

func unloaded(groupID string) *streams.CoordError {
	return streams.Errorf(kerr.NotCoordinator, "This coordinator no longer serves group %s.", groupID)
}

// queueLocked is the group's queue, created if it has none. Under c.mu.
func (c *Coordinator) queueLocked(groupID string) *groupQueue {
	s := c.queues[groupID]
	if s == nil {
		s = &groupQueue{id: groupID}
		c.queues[groupID] = s
	}
	return s
}

// run queues work for one group. Work of one group runs in order, one at a
// time; different groups run in parallel. Exactly one of f and fail runs:
// fail at once if the coordinator is closed, or later if it closes or the
// group is unloaded before f's turn. A queue whose work left no group
// (requests for unknown groups) is dropped once it drains; the queues
// map's lock makes lookup-and-enqueue atomic with that drop.
func (c *Coordinator) run(groupID string, f func(*groupQueue), fail func(*streams.CoordError)) {
	w := work{run: f, fail: fail}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		w.answer(shuttingDown(groupID))
		return
	}
	s := c.queueLocked(groupID)
	if s.unloading {
		c.mu.Unlock()
		w.answer(unloaded(groupID))
		return
	}
	c.queued.Add(1)
	if c.inline {
		c.mu.Unlock()
		c.do(s, f)
		return
	}
	s.mu.Lock()
	s.queue = append(s.queue, w)
	start := !s.running
	s.running = true
	s.mu.Unlock()
	c.mu.Unlock()
	if start {
		go c.drain(s)
	}
}

// QueuedWork is how many works were queued on the groups' executors since
// the coordinator started: each is one crossing of a group's queue (a
// steady heartbeat through the route is one).
func (c *Coordinator) QueuedWork() uint64 { return c.queued.Load() }

// idleLocked marks a queue with no work left as not running, and drops it
// when nothing keeps it (no group, nothing counted in its gate word). Under
// c.mu and s.mu.
func (c *Coordinator) idleLocked(s *groupQueue) {
	s.running = false
	s.queue = nil
	if s.group == nil && s.gate.Load() == 0 && c.queues[s.id] == s {
		delete(c.queues, s.id)
	}
}

func (c *Coordinator) drain(s *groupQueue) {
	for {
		c.mu.Lock()
		s.mu.Lock()
		if len(s.queue) == 0 {
			c.idleLocked(s)
			s.mu.Unlock()
			c.mu.Unlock()
			return
		}
		w := s.queue[0]
		s.queue[0] = work{}
		s.queue = s.queue[1:]
		s.mu.Unlock()
		c.mu.Unlock()
		c.do(s, w.run)
	}
}

// do runs one work of the group under its lock, then runs again the held
// requests its changes released (runReleased), arms or cancels the group's
// expiration (group_expiration.go) as the work left the group, and tells a
// hand-back whose barrier the work ended, outside the lock (barrierEnded).
func (c *Coordinator) do(s *groupQueue, f func(*groupQueue)) {
	s.exec.Lock()
	f(s)
	c.runReleased(s)
	if s.hook != nil {
		s.hook.worked(s)
	}
	c.watchExpiration(s)
	tell := s.barrierEnded(false)
	s.exec.Unlock()
	tell()
}

// runReleased runs again, in the order they were released, the held
// requests a change of this work released; a run may hold its request
// again, or release others. A group gone from the queue (handed back,
// deleted, expired, its log unreadable) releases them all: they run on no
// group, and are answered as such.
func (c *Coordinator) runReleased(s *groupQueue) {
	if s.group == nil {
		for key, a := range s.held {
			delete(s.held, key)
			s.released = append(s.released, a)
		}
	}
	for len(s.released) > 0 {
		a := s.released[0]
		s.released[0] = nil
		s.released = s.released[1:]
		a(s, nil)
	}
	s.released = nil
}

// failHeld answers every held request of a group this coordinator no
// longer serves (closed, unloaded) with err.
func (s *groupQueue) failHeld(err error) {
	for key, a := range s.held {
		delete(s.held, key)
		a(s, err)
	}
}

// takeQueue empties the group's queue. The caller holds c.mu and has
// closed the coordinator or marked the queue unloading, so no work joins
// the queue afterwards and drain starts none of what it held.
func (s *groupQueue) takeQueue() []work {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queue
	s.queue = nil
	return q
}

// Close stops every timer and answers every request still queued with
// COORDINATOR_NOT_AVAILABLE; later requests get the same at once. Work
// already running finishes first.
func (c *Coordinator) Close() {
	c.mu.Lock()
	if !c.closed {
		close(c.stop)
	}
	c.closed = true
	queues := make([]*groupQueue, 0, len(c.queues))
	queued := make([][]work, 0, len(c.queues))
	for _, s := range c.queues {
		queues = append(queues, s)
		queued = append(queued, s.takeQueue())
	}
	c.mu.Unlock()
	answered := 0
	for i, s := range queues {
		// Answered outside the locks: a callback may call the coordinator.
		for _, w := range queued[i] {
			w.answer(shuttingDown(s.id))
		}
		answered += len(queued[i])
		s.exec.Lock()
		s.stopTimers()
		s.failHeld(shuttingDown(s.id))
		tell := s.barrierEnded(true)
		release := s.hookGone()
		s.exec.Unlock()
		tell()
		release()
	}
	c.logger.Info().Int("answered", answered).
		Msgf("Closed the coordinator; %d queued requests answered COORDINATOR_NOT_AVAILABLE.", answered)
}

// Unload drops a group from this coordinator, as Kafka's runtime unloads a
// coordinator partition that moved to another broker: requests queued for
// it, and those arriving while it unloads, are answered NOT_COORDINATOR;
// work already running finishes; its timers stop and its in-memory state
// goes (its records stay in the log, for the next owner to load). Requests
// arriving after Unload returns start afresh, as for a group this
// coordinator never held: the caller stops routing the group here first.
func (c *Coordinator) Unload(groupID string) {
	c.mu.Lock()
	s := c.queues[groupID]
	if s == nil || s.unloading {
		c.mu.Unlock()
		return
	}
	s.unloading = true
	delete(c.claims, groupID)
	queued := s.takeQueue()
	c.mu.Unlock()
	for _, w := range queued {
		w.answer(unloaded(groupID))
	}
	s.exec.Lock() // the running work finishes
	s.stopTimers()
	s.failHeld(unloaded(groupID))
	epoch := int32(-1)
	if g := s.group; g != nil {
		epoch = g.GroupEpoch
	}
	// drain reads s.group under mu.
	c.mu.Lock()
	s.group = nil
	if c.queues[groupID] == s {
		delete(c.queues, groupID)
	}
	c.mu.Unlock()
	tell := s.barrierEnded(true)
	release := s.hookGone()
	s.exec.Unlock()
	tell()
	release()
	c.logger.Info().Str("group", groupID).Int32("epoch", epoch).Int("answered", len(queued)).
		Msgf("[GroupId %s] Unloaded group metadata for group epoch %d; %d queued requests answered NOT_COORDINATOR.", groupID, epoch, len(queued))
}

// barrierEnded takes the signal of the group's hand-back (BeginHandBack's
// onBarrier) if the barrier has ended: it is Ready or Aborted, or it is not
// the group's any more (taken down, the group deleted or unloaded); gone
// (the coordinator closed, the group unloading) ends it whatever its state.
// It runs after each work of the group, with the group's lock held; the
// caller calls tell once it has let the lock go. tell does nothing when
// there is nothing to tell.
func (s *groupQueue) barrierEnded(gone bool) (tell func()) {
	hb := s.barrier
	if hb == nil {
		return func() {}
	}
	var st streams.HandBackState
	if g := s.group; !gone && g != nil && g.Mem.HandBack == hb {
		if st = streams.HandBackStateOf(g); !st.Ready && !st.Aborted {
			return func() {}
		}
	}
	s.barrier = nil
	return func() { hb.OnBarrier(st) }
}
