package coordinator

import (
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// A classic member's requests in a streams group, the coordinator's side of
// route/classic.go: the verdict, then the operation of each key.
//
// A classic group request (JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
// and the offset requests of a migrating group) enters the coordinator once
// before its operation: EnterClassic decides, under the coordinator's one
// lock, whether the gate holds it and, if not, whether the coordinator has
// anything of the group to serve. The caller switches on the verdict, and
// takes a request that passed off the gate's count once it is answered
// (Answered, answeredOnce below); the gate's hold and drain are
// migration_state.go's. A request served then runs its key's operation on
// the group's queue (ClassicJoinGroup, ClassicSyncGroup, ClassicHeartbeat,
// ClassicLeaveGroup, ValidateClassicOffsetCommit below), each a change of
// the group's streams state (coordinator/streams/classic_*.go).

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

// ClassicJoinGroup serves a classic member's JoinGroup inside a streams group,
// as Kafka's classicGroupJoinToConsumerGroup does for consumer groups: the
// join is a streams heartbeat of the member (owned tasks from the owned
// partitions and offset sums, metadata from the SubscriptionInfo), answered
// at once with the member epoch as the generation; the assignment follows in
// SyncGroup.
// The result carries the group's missing internal topics, as a streams
// heartbeat's does (HeartbeatResult.CreatableTopics). The join of a member
// that owns nothing and waits for tasks others still hold is answered once
// they are released (holdClassicJoin below).
func (c *Coordinator) ClassicJoinGroup(req streams.ClassicJoinRequest, done func(streams.ClassicJoinResult)) {
	c.run(req.GroupID, func(s *groupQueue) { c.classicJoin(s, req, done, time.Time{}) },
		func(e *streams.CoordError) { done(streams.ClassicJoinResult{Err: e}) })
}

// classicJoin runs a classic member's JoinGroup in a change of its own and
// answers it, or holds it when the operation says so
// (streams.Change.HoldClassicJoin). until is zero for a join as it
// arrives, and the first hold's bound for a held join run again.
func (c *Coordinator) classicJoin(s *groupQueue, req streams.ClassicJoinRequest, done func(streams.ClassicJoinResult), until time.Time) {
	ch := c.newChange(s)
	res := c.withTopics(ch).ClassicJoinGroup(req)
	res.CreatableTopics = creatableTopics(ch)
	hold, held := ch.HoldClassicJoin(req, res, until)
	if err := c.finish(s, ch); err != nil {
		res = streams.ClassicJoinResult{Err: fmt.Errorf("join %s: %v: %w", req.GroupID, err, appendFailed(err))}
		held = false
	}
	if !held {
		done(res)
		return
	}
	c.holdClassicJoin(s, req, res, done, hold, until.IsZero())
}

// holdClassicJoin keeps a held JoinGroup's answer on the group's executor
// under its key until a change releases it (its tasks came free, or its
// bound passed: Hold.Timer, armed here) or the group goes. A
// second JoinGroup of the same member held replaces the first, which is
// answered REBALANCE_IN_PROGRESS (its client gave up on it).
func (c *Coordinator) holdClassicJoin(s *groupQueue, req streams.ClassicJoinRequest, res streams.ClassicJoinResult, done func(streams.ClassicJoinResult), hold streams.Hold, first bool) {
	// A held join runs again as a rejoin of the member it now is: if the
	// member is fenced meanwhile, it gets UNKNOWN_MEMBER_ID, not a new
	// membership.
	member := hold.Key.Member
	req.MemberID, req.NewMember = member, false
	if old := s.held[hold.Key]; old != nil {
		old(s, fmt.Errorf("member %s joined again: %w", member, kerr.RebalanceInProgress))
	}
	if s.held == nil {
		s.held = map[streams.HoldKey]heldAnswer{}
	}
	s.held[hold.Key] = func(s *groupQueue, err error) {
		if err != nil {
			done(streams.ClassicJoinResult{Err: err})
			return
		}
		s.cancelTimer(streams.ClassicJoinHoldTimerKey(member))
		c.classicJoin(s, req, done, hold.Until)
	}
	// At its bound the hold's timer releases it; like every timer of the
	// group, it stops when the group goes.
	now := c.clock.Now()
	c.armTimer(s, now, hold.Timer(now))
	if !first {
		return // held again: part of what it waits for came free
	}
	groupID := s.id
	d := hold.Until.Sub(now)
	c.logger.Info().Str("group", groupID).Str("member", member).Int32("generation", res.Generation).Dur("hold", d).
		Msgf("[GroupId %s][MemberId %s] Holding the JoinGroup of classic member %s, which owns no task, until the members holding the tasks its target gives it release them (at most %v).",
			groupID, member, member, d)
}

// ClassicSyncGroup serves a classic member's SyncGroup from its current
// assignment (Kafka's classicGroupSyncToConsumerGroup); it writes nothing.
// Its result carries the missing internal topics as a join's does.
func (c *Coordinator) ClassicSyncGroup(req streams.ClassicSyncRequest, done func(streams.ClassicSyncResult)) {
	var topics []streams.CreatableTopic
	runChange(c, req.GroupID, "sync", func(ch *streams.Change) streams.ClassicSyncResult {
		res := c.withTopics(ch).ClassicSyncGroup(req)
		topics = creatableTopics(ch)
		return res
	}, func(err error) streams.ClassicSyncResult { return streams.ClassicSyncResult{Err: err} },
		func(res streams.ClassicSyncResult) {
			res.CreatableTopics = topics
			done(res)
		})
}

// ClassicHeartbeat keeps a classic member's session and tells it to rejoin
// (REBALANCE_IN_PROGRESS) when a JoinGroup would change its assignment:
// the group epoch moved past it, it has tasks to revoke, or tasks it waits
// for were released (Kafka's classicGroupHeartbeatToConsumerGroup). A member
// told to rejoin must do so within its rebalance timeout. done gets nil,
// ErrClassicNotServed or an error wrapping a *kerr.Error.
func (c *Coordinator) ClassicHeartbeat(req streams.ClassicHeartbeatRequest, done func(error)) {
	runChange(c, req.GroupID, "heartbeat", func(ch *streams.Change) error { return ch.ClassicHeartbeat(req) },
		func(err error) error { return err }, done)
}

// ClassicLeaveGroup fences the classic members that leave; done gets one
// error per member (nil, or wrapping UNKNOWN_MEMBER_ID / FENCED_INSTANCE_ID),
// or ErrClassicNotServed for the whole request.
func (c *Coordinator) ClassicLeaveGroup(groupID string, members []streams.ClassicLeaveMember, done func([]error, error)) {
	c.run(groupID, func(s *groupQueue) { done(c.classicLeave(s, groupID, members)) }, func(e *streams.CoordError) { done(nil, e) })
}

func (c *Coordinator) classicLeave(s *groupQueue, groupID string, members []streams.ClassicLeaveMember) ([]error, error) {
	ch := c.newChange(s)
	errs, err := ch.ClassicLeaveGroup(groupID, members)
	if err := c.finish(s, ch); err != nil {
		return nil, fmt.Errorf("leave %s: %v: %w", groupID, err, appendFailed(err))
	}
	return errs, err
}

// ValidateClassicOffsetCommit checks an OffsetCommit or TxnOffsetCommit of a
// classic member, whose generation is its member epoch, as Kafka's classic
// group does: an unknown member gets UNKNOWN_MEMBER_ID, another generation
// ILLEGAL_GENERATION, a wrong instance FENCED_INSTANCE_ID. It never answers
// REBALANCE_IN_PROGRESS (Kafka Streams' thread dies on it): a member's
// commits are accepted at its epoch even while a new round is pending. A
// commit without a member (generation -1, no member id) is accepted when the
// group is empty or, for TxnOffsetCommit, always, as Kafka does. A streams
// member is checked by ValidateOffsetCommit.
func (c *Coordinator) ValidateClassicOffsetCommit(req streams.OffsetCommitRequest, done func(streams.OffsetCommitResult)) {
	c.run(req.GroupID, func(s *groupQueue) { done(streams.ValidateClassicOffsetCommit(s.group, req)) }, func(e *streams.CoordError) { done(streams.OffsetCommitResult{Err: e}) })
}
