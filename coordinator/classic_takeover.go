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
func (c *Coordinator) TakeOverClassicGroup(state streams.ClassicGroupState, first *kmsg.StreamsGroupHeartbeatRequest, client streams.ClientInfo, respond func(*kmsg.StreamsGroupHeartbeatResponse)) {
	if resp := streams.ValidateHeartbeat(first); resp != nil {
		respond(resp)
		return
	}
	c.run(state.GroupID, func(s *groupQueue) { respond(c.takeOver(s, state, first, client)) },
		func(e *streams.CoordError) { respond(streams.HeartbeatError(first, e)) })
}

func (c *Coordinator) takeOver(s *groupQueue, state streams.ClassicGroupState, first *kmsg.StreamsGroupHeartbeatRequest, client streams.ClientInfo) *kmsg.StreamsGroupHeartbeatResponse {
	if s.group == nil && len(state.Members) == 0 {
		// An empty classic group has nothing to take over: only its
		// offsets, which stay upstream. The join creates the group.
		return c.heartbeat(s, first, client)
	}
	ch := c.newChange(s)
	resp, imported := ch.TakeOverClassicGroup(state, first, client)
	if err := c.finish(s, ch); err != nil {
		return streams.HeartbeatError(first, streams.Errorf(appendFailed(err), "Takeover of %s: %v", state.GroupID, err))
	}
	if ch.Outcome == streams.OutcomeCommit {
		c.logger.Info().Str("group", state.GroupID).Int32("generation", state.Generation).Int("classic_members", imported).
			Msgf("[GroupId %s] Converted the classic group at generation %d with %d live members to a streams group.", state.GroupID, state.Generation, imported)
	}
	return resp
}
