package coordinator

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// TakeOverClassicGroup turns a live classic group into a streams group and
// runs the first streams-protocol member's join in the same change (Kafka's
// convertToConsumerGroup, then the heartbeat): group epoch = assignment
// epoch = the classic generation; every classic member becomes a classic
// member of the streams group, STABLE at member epoch = generation, holding
// what its last SyncGroup gave it, with that as its target too. The join
// then bumps the epoch, so classic members are pulled to rejoin by Heartbeat
// REBALANCE_IN_PROGRESS only; their generation stays valid for commits until
// they do.
//
// Each classic member's session continues from its LastHeartbeat: a member
// whose session has already run out is not carried over (its tasks are free
// at once, as the broker would have freed them), the others are fenced at
// LastHeartbeat + session timeout unless they heartbeat before.
//
// Nothing is written if anything fails: an existing group here, a join
// that is not a first join with a topology, or a classic task the topology
// does not know (the classic app and the streams member disagree on the
// topology, and the task's owner could not be tracked).
func (c *Coordinator) TakeOverClassicGroup(state streams.ClassicGroupState, first *kmsg.StreamsGroupHeartbeatRequest, client streams.ClientInfo, done func(HeartbeatResult)) {
	if resp := streams.ValidateHeartbeat(first); resp != nil {
		done(HeartbeatResult{Response: resp})
		return
	}
	c.run(state.GroupID, func(s *groupQueue) { done(c.takeOver(s, state, first, client)) },
		func(e *streams.CoordError) { done(HeartbeatResult{Response: streams.HeartbeatError(first, e)}) })
}

// takeOver runs the takeover on the group's queue; its result carries the
// missing internal topics as a heartbeat's does (a takeover whose
// changelog is gone creates it, as the join would).
func (c *Coordinator) takeOver(s *groupQueue, state streams.ClassicGroupState, first *kmsg.StreamsGroupHeartbeatRequest, client streams.ClientInfo) HeartbeatResult {
	if s.group == nil && len(state.Members) == 0 {
		// An empty classic group has nothing to take over: only its
		// offsets, which stay upstream. The join creates the group.
		return c.heartbeat(s, first, client)
	}
	ch := c.withTopics(c.newChange(s))
	resp, imported := ch.TakeOverClassicGroup(state, first, client)
	topics := creatableTopics(ch)
	if err := c.finish(s, ch); err != nil {
		return HeartbeatResult{Response: streams.HeartbeatError(first, streams.Errorf(appendFailed(err), "Takeover of %s: %v", state.GroupID, err)), CreatableTopics: topics}
	}
	if ch.Outcome == streams.OutcomeCommit {
		c.logger.Info().Str("group", state.GroupID).Int32("generation", state.Generation).Int("classic_members", imported).
			Msgf("[GroupId %s] Converted the classic group at generation %d with %d live members to a streams group.", state.GroupID, state.Generation, imported)
	}
	return HeartbeatResult{Response: resp, CreatableTopics: topics}
}

// RenewSession re-arms the streams member's session timer from now
// (streams.Change.RenewSession): a takeover calls it as it answers the
// member whose join it held. done runs, on a goroutine of its own (it
// answers the member), once the timer is armed, or the group or member is
// found not here.
func (c *Coordinator) RenewSession(groupID, memberID string, done func()) {
	c.run(groupID, func(s *groupQueue) {
		defer func() { go done() }()
		if s.group == nil {
			return
		}
		ch := c.newChange(s)
		if ch.RenewSession(memberID) {
			_ = c.finish(s, ch) // no records: nothing to append
		}
	}, func(*streams.CoordError) { go done() })
}
