package coordinator

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// classicJoin runs a classic member's JoinGroup in a change of its own and
// answers it, or holds it (holdClassicJoin). deadline is zero for a join as
// it arrives, and the first hold's deadline for a held join run again.
func (c *Coordinator) classicJoin(s *groupQueue, req streams.ClassicJoinRequest, done func(streams.ClassicJoinResult), deadline time.Time) {
	ch := c.newChange(s)
	res := c.withTopics(ch).ClassicJoinGroup(req)
	res.CreatableTopics = creatableTopics(ch)
	if err := c.finish(s, ch); err != nil {
		res = streams.ClassicJoinResult{Err: fmt.Errorf("join %s: %v: %w", req.GroupID, err, appendFailed(err))}
	}
	if !c.holdClassicJoin(s, req, res, done, deadline) {
		done(res)
	}
}

// holdClassicJoin holds a JoinGroup that was served (no error), asks for no
// internal topic, and leaves its member waiting for tasks others hold, until
// they are released or the hold's time (streams.ClassicJoinHold from its
// arrival) ran out (held_work.go). A second JoinGroup of the same member
// replaces the held one, which is answered REBALANCE_IN_PROGRESS (its client
// gave up on it).
func (c *Coordinator) holdClassicJoin(s *groupQueue, req streams.ClassicJoinRequest, res streams.ClassicJoinResult, done func(streams.ClassicJoinResult), deadline time.Time) bool {
	if res.Err != nil || len(res.CreatableTopics) > 0 || !streams.ClassicJoinWaiting(s.group, res.MemberID) {
		return false
	}
	now := c.clock.Now()
	first := deadline.IsZero()
	if first {
		if !streams.SuccessorJoin(s.group, res.MemberID) {
			return false
		}
		d := streams.ClassicJoinHold(req)
		if d <= 0 {
			return false
		}
		deadline = now.Add(d)
	}
	if !now.Before(deadline) {
		return false
	}
	// A held join runs again as a rejoin of the member it now is: if the
	// member is fenced meanwhile, it gets UNKNOWN_MEMBER_ID, not a new
	// membership.
	member := res.MemberID
	req.MemberID, req.NewMember = member, false
	s.hold(member, &heldWork{
		ready: func(g *streams.Group, now time.Time) bool {
			return !streams.ClassicJoinWaiting(g, member) || !now.Before(deadline)
		},
		run: func(s *groupQueue) {
			s.cancelTimer(streams.ClassicJoinHoldTimerKey(member))
			c.classicJoin(s, req, done, deadline)
		},
		fail: func(e *streams.CoordError) { done(streams.ClassicJoinResult{Err: e}) },
	}, func(*heldWork) {
		done(streams.ClassicJoinResult{Err: fmt.Errorf("member %s joined again: %w", member, kerr.RebalanceInProgress)})
	})
	// At the deadline the timer's (empty) work lets runHeld answer it;
	// like every timer of the group, it stops when the group goes.
	c.armTimer(s, now, streams.TimerOp{Key: streams.ClassicJoinHoldTimerKey(member), After: deadline.Sub(now), Fire: func(*streams.Change) {}})
	if !first {
		return true // held again: part of what it waits for came free
	}
	groupID := s.id
	c.logger.Info().Str("group", groupID).Str("member", member).Int32("generation", res.Generation).Dur("hold", deadline.Sub(now)).
		Msgf("[GroupId %s][MemberId %s] Holding the JoinGroup of classic member %s, which owns no task, until the members holding the tasks its target gives it release them (at most %v).",
			groupID, member, member, deadline.Sub(now))
	return true
}
