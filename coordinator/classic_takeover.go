package coordinator

import (
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// ClassicGroupState is a live classic Kafka Streams group as read at the
// upstream coordinator when it is taken over (DescribeGroups plus what the
// proxy saw pass through): its generation and, for every member, its last
// JoinGroup subscription and its last SyncGroup assignment.
type ClassicGroupState struct {
	GroupID    string
	Generation int32
	Members    []ClassicMemberState
}

// ClassicMemberState is one member of a classic group being taken over.
type ClassicMemberState struct {
	MemberID, InstanceID string
	Client               ClientInfo
	// SessionTimeoutMs and RebalanceTimeoutMs come from the member's
	// JoinGroup as it passed through; DescribeGroups does not report them.
	SessionTimeoutMs, RebalanceTimeoutMs int32
	// LastHeartbeat is when the upstream last renewed the member's session
	// (a Heartbeat, JoinGroup, SyncGroup or OffsetCommit it accepted), on
	// the coordinator's clock; zero if unknown. The member's session here
	// runs on from it, so a member that stopped just before the takeover
	// is fenced when the broker would have fenced it, not a whole session
	// later.
	LastHeartbeat time.Time
	Subscription  *classicstreams.ConsumerSubscription
	Info          *classicstreams.SubscriptionInfo
	// Assignment and AssignmentInfo: what the member got in its last
	// SyncGroup, i.e. what it holds.
	Assignment     *classicstreams.ConsumerAssignment
	AssignmentInfo *classicstreams.AssignmentInfo
}

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
func (c *Coordinator) TakeOverClassicGroup(state ClassicGroupState, first *kmsg.StreamsGroupHeartbeatRequest, client ClientInfo, respond func(*kmsg.StreamsGroupHeartbeatResponse)) {
	if resp := validateHeartbeat(first); resp != nil {
		respond(resp)
		return
	}
	c.run(state.GroupID, func(s *shard) { respond(c.takeOver(s, state, first, client)) },
		func(e *streams.CoordError) { respond(heartbeatError(first, e)) })
}

func (c *Coordinator) takeOver(s *shard, state ClassicGroupState, first *kmsg.StreamsGroupHeartbeatRequest, client ClientInfo) *kmsg.StreamsGroupHeartbeatResponse {
	fail := func(code *kerr.Error, format string, args ...any) *kmsg.StreamsGroupHeartbeatResponse {
		return heartbeatError(first, streams.Errorf(code, format, args...))
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
	ch.g, s.group, ch.created = g, g, true
	topo := topologyFromRequest(first.Topology)
	configured, _, err := ch.configureTopology(&topo)
	if err != nil {
		c.rollback(s, ch)
		return fail(kerr.UnknownServerError, "Takeover of %s: %v", state.GroupID, err)
	}
	imported, err := importClassicMembers(liveClassicMembers(state, ch.now), configured, topo.Epoch, ch.now)
	if err != nil {
		c.rollback(s, ch)
		return fail(kerr.CoordinatorNotAvailable, "Takeover of %s: %v", state.GroupID, err)
	}

	// The group is the proxy's from this change on (ownership.go). A
	// claim made for this takeover is consumed here, not by a later join.
	own := ch.takeClaim()
	if own == nil {
		own = &streams.OwnershipValue{Source: OwnershipTakeover, UpstreamState: "Stable", ClaimedAtMs: ch.now.UnixMilli()}
	}
	ch.emit(streams.NewOwnershipRecord(g.ID, own))
	gen := state.Generation
	ch.emit(streams.NewGroupEpochRecord(g.ID, &streams.GroupMetadataValue{Epoch: gen, ValidatedTopologyEpoch: -1}))
	ch.emit(streams.NewTargetAssignmentEpochRecord(g.ID, gen, ch.now.UnixMilli()))
	for _, im := range imported {
		ch.emit(streams.NewMemberRecord(g.ID, im.id, im.meta))
		ch.emit(streams.NewTargetAssignmentRecord(g.ID, im.id, im.tasks))
		ch.emit(streams.NewCurrentAssignmentRecord(g.ID, im.id, &streams.CurrentMemberAssignmentValue{
			MemberEpoch: gen, PreviousMemberEpoch: gen, State: streams.MemberStable, Assigned: im.tasks,
			ActiveEpochs: streams.RestrictEpochs(nil, im.tasks.Active, true, gen),
		}))
	}
	resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	resp.Version = first.Version
	if err := ch.heartbeat(first, client, resp); err != nil {
		c.rollback(s, ch)
		return heartbeatError(first, streams.AsCoordError(err))
	}
	for _, im := range imported {
		ch.scheduleCarriedSession(im.id, im.sessionLeft)
	}
	if err := c.commit(s, ch); err != nil {
		return fail(kerr.CoordinatorNotAvailable, "Takeover of %s: %v", state.GroupID, err)
	}
	c.logger.Info().Str("group", state.GroupID).Int32("generation", gen).Int("classic_members", len(imported)).
		Msgf("[GroupId %s] Converted the classic group at generation %d with %d live members to a streams group.", state.GroupID, gen, len(imported))
	return resp
}

type importedMember struct {
	id          string
	meta        *streams.MemberMetadataValue
	tasks       streams.TaskSets
	sessionLeft time.Duration
}

// liveClassicMembers drops the members whose session ran out before now: the
// upstream would have fenced them already (they are fenced there with the
// others all the same).
func liveClassicMembers(state ClassicGroupState, now time.Time) ClassicGroupState {
	live := state
	live.Members = make([]ClassicMemberState, 0, len(state.Members))
	for _, cm := range state.Members {
		if classicSessionLeft(cm, now) > 0 {
			live.Members = append(live.Members, cm)
		}
	}
	return live
}

// classicSessionLeft is what remains of a carried member's session at now:
// a whole session if its last heartbeat is unknown.
func classicSessionLeft(cm ClassicMemberState, now time.Time) time.Duration {
	session := time.Duration(cm.SessionTimeoutMs) * time.Millisecond
	if cm.LastHeartbeat.IsZero() {
		return session
	}
	return min(cm.LastHeartbeat.Add(session).Sub(now), session)
}

// importClassicMembers reads each classic member's metadata and held tasks
// (active tasks from its assigned partitions, standbys from its
// AssignmentInfo), all checked against the configured topology. A task
// claimed by two members as active is an error: the classic group itself
// would be broken.
func importClassicMembers(state ClassicGroupState, topo *streams.ConfiguredTopology, topologyEpoch int32, now time.Time) ([]importedMember, error) {
	tt := classicTaskTopology(topo)
	if tt == nil {
		return nil, fmt.Errorf("the topology is not ready, the classic tasks cannot be checked")
	}
	owner := map[streams.TaskID]string{}
	out := make([]importedMember, 0, len(state.Members))
	for _, cm := range state.Members {
		if cm.Subscription == nil || cm.Info == nil {
			return nil, fmt.Errorf("member %s: no subscription", cm.MemberID)
		}
		meta := classicMemberMetadata(cm)
		meta.TopologyEpoch = topologyEpoch
		var active, standby streams.TasksBuilder = streams.TasksBuilder{}, streams.TasksBuilder{}
		if cm.Assignment != nil {
			ts, unknown := classicstreams.OwnedActiveTasks(cm.Assignment.AssignedPartitions, tt)
			if len(unknown) > 0 {
				return nil, fmt.Errorf("member %s holds partitions %v no subtopology of the streams topology reads", cm.MemberID, unknown)
			}
			for _, t := range ts {
				id, err := checkedTask(t, topo)
				if err != nil {
					return nil, fmt.Errorf("member %s: %w", cm.MemberID, err)
				}
				if o, dup := owner[id]; dup {
					return nil, fmt.Errorf("task %s_%d is active on %s and %s", id.Subtopology, id.Partition, o, cm.MemberID)
				}
				owner[id] = cm.MemberID
				active.Add(id.Subtopology, id.Partition)
			}
		}
		if cm.AssignmentInfo != nil {
			for _, st := range cm.AssignmentInfo.StandbyTasks {
				id, err := checkedTask(st.Task, topo)
				if err != nil {
					return nil, fmt.Errorf("member %s: standby: %w", cm.MemberID, err)
				}
				standby.Add(id.Subtopology, id.Partition)
			}
		}
		out = append(out, importedMember{id: cm.MemberID, meta: meta, tasks: streams.TaskSets{Active: active.Build(), Standby: standby.Build()},
			sessionLeft: classicSessionLeft(cm, now)})
	}
	return out, nil
}

func checkedTask(t classicstreams.TaskID, topo *streams.ConfiguredTopology) (streams.TaskID, error) {
	sid := strconv.Itoa(int(t.Subtopology))
	s := topo.SubtopologyByID(sid)
	if t.NamedTopology != "" || s == nil || t.Partition < 0 || t.Partition >= s.NumTasks {
		return streams.TaskID{}, fmt.Errorf("task %v is not a task of the streams topology", t)
	}
	return streams.TaskID{Subtopology: sid, Partition: t.Partition}, nil
}

// classicMemberMetadata is the member record of an imported classic member.
func classicMemberMetadata(cm ClassicMemberState) *streams.MemberMetadataValue {
	hb := classicHeartbeatRequest(ClassicJoinRequest{
		GroupID: "", MemberID: cm.MemberID, InstanceID: cm.InstanceID,
		RebalanceTimeoutMs: cm.RebalanceTimeoutMs, Subscription: cm.Subscription, Info: cm.Info,
	}, 0)
	meta := updatedMemberMetadata(nil, hb, cm.Client)
	meta.Classic = &streams.ClassicMemberMetadata{
		SessionTimeoutMs:        cm.SessionTimeoutMs,
		ConsumerProtocolVersion: cm.Subscription.Version,
		SubscriptionVersion:     cm.Info.Version,
		LatestSupportedVersion:  cm.Info.LatestSupportedVersion,
	}
	return meta
}
