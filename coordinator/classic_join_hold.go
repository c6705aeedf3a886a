package coordinator

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/streamshift/streamshift/coordinator/streams"
)

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
		if held {
			held = false
			s.cancelTimer(streams.ClassicJoinHoldTimerKey(hold.Key.Member))
		}
	}
	if !held {
		done(res)
		return
	}
	c.holdClassicJoin(s, req, res, done, hold, until.IsZero())
}

// holdClassicJoin keeps a held JoinGroup's answer on the group's executor
// under its key until a change releases it (its tasks came free, or its
// bound passed: the operation armed a timer for it) or the group goes. A
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
	if !first {
		return // held again: part of what it waits for came free
	}
	groupID := s.id
	d := hold.Until.Sub(c.clock.Now())
	c.logger.Info().Str("group", groupID).Str("member", member).Int32("generation", res.Generation).Dur("hold", d).
		Msgf("[GroupId %s][MemberId %s] Holding the JoinGroup of classic member %s, which owns no task, until the members holding the tasks its target gives it release them (at most %v).",
			groupID, member, member, d)
}
