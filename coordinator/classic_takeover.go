package coordinator

import (
	"github.com/twmb/franz-go/pkg/kerr"
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
	c.run(state.GroupID, func(s *shard) { respond(c.takeOver(s, state, first, client)) },
		func(e *streams.CoordError) { respond(streams.HeartbeatError(first, e)) })
}

func (c *Coordinator) takeOver(s *shard, state streams.ClassicGroupState, first *kmsg.StreamsGroupHeartbeatRequest, client streams.ClientInfo) *kmsg.StreamsGroupHeartbeatResponse {
	fail := func(code *kerr.Error, format string, args ...any) *kmsg.StreamsGroupHeartbeatResponse {
		return streams.HeartbeatError(first, streams.Errorf(code, format, args...))
	}
	if s.group != nil {
		return fail(kerr.GroupIDNotFound, "Group %s is already a streams group here; it cannot be taken over.", state.GroupID)
	}
	if len(state.Members) == 0 {
		// An empty classic group has nothing to take over: only its
		// offsets, which stay upstream. The join creates the group.
		return c.heartbeat(s, first, client)
	}
	if first.MemberEpoch != 0 || first.Topology == nil || first.Group != state.GroupID {
		return fail(kerr.InvalidRequest, "A takeover runs the first join (epoch 0, with a topology) of group %s.", state.GroupID)
	}
	ch := c.newChange(s)
	g := streams.NewGroup(state.GroupID)
	ch.G, s.group, ch.Created = g, g, true
	topo := streams.TopologyFromRequest(first.Topology)
	configured, _, err := ch.ConfigureTopology(&topo)
	if err != nil {
		c.rollback(s, ch)
		return fail(kerr.UnknownServerError, "Takeover of %s: %v", state.GroupID, err)
	}
	imported, err := streams.ImportClassicMembers(streams.LiveClassicMembers(state, ch.Now), configured, topo.Epoch, ch.Now)
	if err != nil {
		c.rollback(s, ch)
		return fail(kerr.CoordinatorNotAvailable, "Takeover of %s: %v", state.GroupID, err)
	}

	// The group is the proxy's from this change on (ownership.go). A
	// claim made for this takeover is consumed here, not by a later join.
	own := ch.TakeClaim()
	if own == nil {
		own = &streams.OwnershipValue{Source: streams.OwnershipTakeover, UpstreamState: "Stable", ClaimedAtMs: ch.Now.UnixMilli()}
	}
	ch.Emit(streams.NewOwnershipRecord(g.ID, own))
	gen := state.Generation
	ch.Emit(streams.NewGroupEpochRecord(g.ID, &streams.GroupMetadataValue{Epoch: gen, ValidatedTopologyEpoch: -1}))
	ch.Emit(streams.NewTargetAssignmentEpochRecord(g.ID, gen, ch.Now.UnixMilli()))
	for _, im := range imported {
		ch.Emit(streams.NewMemberRecord(g.ID, im.Id, im.Meta))
		ch.Emit(streams.NewTargetAssignmentRecord(g.ID, im.Id, im.Tasks))
		ch.Emit(streams.NewCurrentAssignmentRecord(g.ID, im.Id, &streams.CurrentMemberAssignmentValue{
			MemberEpoch: gen, PreviousMemberEpoch: gen, State: streams.MemberStable, Assigned: im.Tasks,
			ActiveEpochs: streams.RestrictEpochs(nil, im.Tasks.Active, true, gen),
		}))
	}
	resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	resp.Version = first.Version
	if err := ch.Heartbeat(first, client, resp); err != nil {
		c.rollback(s, ch)
		return streams.HeartbeatError(first, streams.AsCoordError(err))
	}
	for _, im := range imported {
		ch.ScheduleCarriedSession(im.Id, im.SessionLeft)
	}
	if err := c.commit(s, ch); err != nil {
		return fail(kerr.CoordinatorNotAvailable, "Takeover of %s: %v", state.GroupID, err)
	}
	c.logger.Info().Str("group", state.GroupID).Int32("generation", gen).Int("classic_members", len(imported)).
		Msgf("[GroupId %s] Converted the classic group at generation %d with %d live members to a streams group.", state.GroupID, gen, len(imported))
	return resp
}
