package coordinator

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/streamshift/streamshift/coordinator/streams"
)

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
