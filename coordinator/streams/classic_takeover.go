package streams

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
)

type importedMember struct {
	ID    string
	Meta  *MemberMetadataValue
	Tasks TaskSets
	// Revoking: active tasks the member owned when it joined this
	// generation and its assignment takes away. It may still run them.
	Revoking    Tasks
	sessionLeft time.Duration
	// sums are the task offset sums of the member's last upstream
	// JoinGroup, for the status page's lag (when is not known: At is zero).
	sums []kmsg.TaskOffset
	// client names the connection of the member's latest request upstream
	// (the observer's), so the first join's replacement by identity sees
	// whether it is closed.
	client ClientInfo
	// unseen: the observer saw no request of the member (an owner
	// failover, a restart): its unseen expiry is armed.
	unseen bool
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
// AssignmentInfo, and the active tasks it is still revoking), all checked
// against the configured topology. A task assigned to two members as active
// is an error: the classic group itself would be broken. A task one member
// is revoking and another holds is retried later (errRevocationInFlight).
func importClassicMembers(state ClassicGroupState, topo *configuredTopology, topologyEpoch int32, now time.Time) ([]importedMember, error) {
	tt := importTaskTopology(topo)
	if tt == nil {
		why := "its subtopologies have no classic task ids"
		if topo.Err != nil {
			why = "it is not ready: " + topo.Err.Message
		}
		return nil, fmt.Errorf("the classic tasks cannot be checked against the topology (%s)", why)
	}
	owner := map[TaskID]string{}
	out := make([]importedMember, 0, len(state.Members))
	for _, cm := range state.Members {
		if cm.Subscription == nil || cm.Info == nil {
			return nil, fmt.Errorf("member %s: %w", cm.MemberID, errNoSubscription)
		}
		meta := classicMemberMetadata(cm)
		meta.TopologyEpoch = topologyEpoch
		var active, standby TasksBuilder = TasksBuilder{}, TasksBuilder{}
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
		revoking := pendingRevocation(cm, tt, topo, active.Build())
		if cm.AssignmentInfo != nil {
			for _, st := range cm.AssignmentInfo.StandbyTasks {
				id, err := checkedTask(st.Task, topo)
				if err != nil {
					return nil, fmt.Errorf("member %s: standby: %w", cm.MemberID, err)
				}
				standby.Add(id.Subtopology, id.Partition)
			}
		}
		out = append(out, importedMember{ID: cm.MemberID, Meta: meta, Tasks: TaskSets{Active: active.Build(), Standby: standby.Build()}, Revoking: revoking,
			sessionLeft: classicSessionLeft(cm, now), sums: classicOffsetReport(cm.Info, time.Time{}).ClassicSums, client: cm.Client,
			unseen: cm.LastHeartbeat.IsZero() && cm.Client.Closed == nil})
	}
	for _, im := range out {
		if err := claimActive(owner, im.ID, im.Revoking); err != nil {
			return nil, fmt.Errorf("%w: %v", errRevocationInFlight, err)
		}
	}
	return out, nil
}

// pendingRevocation is what a carried member must still revoke: the active
// tasks of the partitions it owned when it joined this generation
// (ConsumerProtocolSubscription.OwnedPartitions) that its assignment does not
// hold. Under the cooperative protocol the upstream group is Stable as soon
// as the leader's SyncGroup arrived, while a member may not have its answer
// yet, or be in its revocation callback (ConsumerCoordinator.onJoinComplete
// revokes, then rejoins): it runs those tasks until its next JoinGroup, which
// reports them gone. Kafka's leader gives such a task to its next owner only
// in the generation after that JoinGroup; the streams group keeps them
// pending revocation on the member until its join says so (reconcile), for
// the same reason. An eager member owns nothing when it joins.
func pendingRevocation(cm ClassicMemberState, tt *classicstreams.TaskTopology, topo *configuredTopology, assigned Tasks) Tasks {
	// Partitions no subtopology reads hold no task to protect.
	owned, _ := classicstreams.OwnedActiveTasks(cm.Subscription.OwnedPartitions, tt)
	revoking := TasksBuilder{}
	for _, t := range owned {
		id, err := checkedTask(t, topo)
		if err != nil {
			continue
		}
		if !TasksContains(assigned, id.Subtopology, id.Partition) {
			revoking.Add(id.Subtopology, id.Partition)
		}
	}
	return revoking.Build()
}

// claimActive records member as the holder of tasks in owner, or names the
// task another member holds already.
func claimActive(owner map[TaskID]string, member string, tasks Tasks) error {
	var err error
	ForEachTask(tasks, func(id TaskID) {
		if o, dup := owner[id]; dup && err == nil {
			err = fmt.Errorf("task %s_%d is active on %s and %s", id.Subtopology, id.Partition, o, member)
		}
		owner[id] = member
	})
	return err
}

// importTaskTopology is the task topology the classic members' tasks are
// checked against: the configured one, also while internal topics are
// missing (their partition counts are decided, only the topics are absent;
// they are created as for any join, and the group waits with status
// MISSING_INTERNAL_TOPICS as a Kafka 4.4 group does). nil when the topology
// cannot be configured otherwise.
func importTaskTopology(topo *configuredTopology) *classicstreams.TaskTopology {
	if topo.IsReady() {
		return classicTaskTopology(topo)
	}
	if topo.Status() != StatusMissingInternalTopics || len(topo.ConfiguredSubtopologies) == 0 {
		return nil
	}
	return taskTopologyOf(topo)
}

func checkedTask(t classicstreams.TaskID, topo *configuredTopology) (TaskID, error) {
	sid := strconv.Itoa(int(t.Subtopology))
	s := topo.SubtopologyByID(sid)
	if t.NamedTopology != "" || s == nil || t.Partition < 0 || t.Partition >= s.NumTasks {
		return TaskID{}, fmt.Errorf("task %v is not a task of the streams topology", t)
	}
	return TaskID{Subtopology: sid, Partition: t.Partition}, nil
}

// classicMemberMetadata is the member record of an imported classic member.
func classicMemberMetadata(cm ClassicMemberState) *MemberMetadataValue {
	hb := ClassicJoinHeartbeat(ClassicJoinRequest{
		GroupID: "", MemberID: cm.MemberID, InstanceID: cm.InstanceID,
		RebalanceTimeoutMs: cm.RebalanceTimeoutMs, Subscription: cm.Subscription, Info: cm.Info,
	}, 0)
	meta := updatedMemberMetadata(nil, hb, cm.Client)
	meta.Classic = &ClassicMemberMetadata{
		SessionTimeoutMs:        cm.SessionTimeoutMs,
		ConsumerProtocolVersion: cm.Subscription.Version,
		SubscriptionVersion:     cm.Info.Version,
		LatestSupportedVersion:  cm.Info.LatestSupportedVersion,
	}
	return meta
}

// TakeOverClassicGroup is the operation of a takeover of a live classic
// group with members (Coordinator.TakeOverClassicGroup): the group built
// from them and the first streams member's join, in one change, or nothing
// if anything fails. It returns the join's answer and how many classic
// members were carried over.
func (ch *Change) TakeOverClassicGroup(state ClassicGroupState, first *kmsg.StreamsGroupHeartbeatRequest, client ClientInfo) (resp *kmsg.StreamsGroupHeartbeatResponse, imported int) {
	fail := func(code *kerr.Error, format string, args ...any) *kmsg.StreamsGroupHeartbeatResponse {
		return HeartbeatError(first, Errorf(code, format, args...))
	}
	if ch.Group != nil {
		return fail(kerr.GroupIDNotFound, "Group %s is already a streams group here; it cannot be taken over.", state.GroupID), 0
	}
	if first.MemberEpoch != 0 || first.Topology == nil || first.Group != state.GroupID {
		return fail(kerr.InvalidRequest, "A takeover runs the first join (epoch 0, with a topology) of group %s.", state.GroupID), 0
	}
	g := newGroup(state.GroupID)
	ch.Group, ch.Created = g, true
	topo := TopologyFromRequest(first.Topology)
	configured, _, err := ch.configureTopology(&topo)
	if err != nil {
		// The topology itself is refused (Kafka's answer to this join
		// of a new group, e.g. STREAMS_INVALID_TOPOLOGY).
		ch.RollBack()
		ce := asCoordError(err)
		return fail(ce.Code, "Takeover of classic group %s: %s", state.GroupID, ce.Msg), 0
	}
	if code, why := takeoverTopologyRefusal(configured); code != nil {
		ch.RollBack()
		return fail(code, "Takeover of classic group %s %s", state.GroupID, why), 0
	}
	live, doubles := resolveDoubleActives(liveClassicMembers(state, ch.Now), importTaskTopology(configured))
	if len(live.Members) > 0 && live.Generation < 1 {
		// A classic group with members is Stable only from generation
		// 1 on; carried at 0 they would hold member epoch 0, reserved for
		// joins (KIP-848's KAFKA-21581). Not seen from Kafka: wait.
		ch.RollBack()
		return fail(kerr.CoordinatorLoadInProgress, "Takeover of classic group %s waits: its members are at generation %d, not a stable generation.", state.GroupID, live.Generation), 0
	}
	members, err := importClassicMembers(live, configured, topo.Epoch, ch.Now)
	if errors.Is(err, errNoSubscription) || errors.Is(err, errRevocationInFlight) {
		// What passed through does not cover every member yet (a
		// restart of streamshift), or a revocation is in flight
		// upstream: a later attempt may see it settled.
		ch.RollBack()
		return fail(kerr.CoordinatorLoadInProgress, "Takeover of classic group %s: %v", state.GroupID, err), 0
	}
	if err != nil {
		// The classic members hold tasks the streams topology does not
		// have: the apps disagree on the topology, and no retry changes
		// that. Fatal for the streams member, as Kafka answers a
		// topology it cannot take; the classic group goes on upstream.
		ch.RollBack()
		return fail(kerr.StreamsInvalidTopology, "Takeover of classic group %s cannot succeed: %v", state.GroupID, err), 0
	}

	// The group is the proxy's from this change on (coordinator/ownership.go). A
	// claim made for this takeover is consumed here, not by a later join.
	own := ch.takeClaim()
	if own == nil {
		own = &OwnershipValue{Source: OwnershipTakeover, UpstreamState: "Stable", ClaimedAtMs: ch.Now.UnixMilli()}
	}
	ch.emit(newOwnershipRecord(g.ID, own))
	ch.logDoubleActives(state.Generation, doubles)
	// At least 1, as a new group's (KAFKA-20268): with no live member
	// left, a generation 0 would put the first target at epoch 1.
	gen := max(state.Generation, 1)
	ch.emit(newGroupEpochRecord(g.ID, &GroupMetadataValue{Epoch: gen, ValidatedTopologyEpoch: -1}))
	ch.emit(newTargetAssignmentEpochRecord(g.ID, gen, ch.Now.UnixMilli()))
	for _, im := range members {
		ch.emit(newMemberRecord(g.ID, im.ID, im.Meta))
		ch.emit(newTargetAssignmentRecord(g.ID, im.ID, im.Tasks))
		cur := &CurrentMemberAssignmentValue{
			MemberEpoch: gen, PreviousMemberEpoch: gen, State: MemberStable, Assigned: im.Tasks,
			ActiveEpochs: restrictEpochs(nil, TasksUnion(im.Tasks.Active, im.Revoking), true, gen),
		}
		if len(im.Revoking) > 0 {
			// Held until the member's next JoinGroup reports them
			// revoked; its revocation commits are accepted meanwhile.
			cur.State, cur.PendingRevocation = MemberUnrevokedTasks, TaskSets{Active: im.Revoking}
		}
		ch.emit(newCurrentAssignmentRecord(g.ID, im.ID, cur))
		ch.noteConn(im.ID, im.client)
	}
	// The first join runs as any join: if the classic members of its
	// process are all gone from the wire (a rolling step stopped them;
	// their connections closed), it replaces them at once (replace.go)
	// instead of waiting for their sessions; they are fenced upstream
	// with the others.
	resp = kmsg.NewPtrStreamsGroupHeartbeatResponse()
	resp.Version = first.Version
	if err := ch.Heartbeat(first, client, resp); err != nil {
		ch.RollBack()
		return HeartbeatError(first, asCoordError(err)), 0
	}
	for _, im := range members {
		m := g.Members[im.ID]
		if m == nil {
			continue // replaced by the join
		}
		imported++
		ch.scheduleCarriedSession(im.ID, im.sessionLeft)
		if im.unseen {
			ch.scheduleUnseenExpiry(im.ID)
		}
		if len(im.Revoking) > 0 {
			ch.logInfo(im.ID).Msgf("[GroupId %s][MemberId %s] Classic member carried over while revoking active tasks %v (a cooperative rebalance is in flight upstream); they stay its, pending revocation, until its JoinGroup reports them revoked.",
				g.ID, im.ID, im.Revoking)
		}
		m.Report = OffsetReport{ClassicSums: im.sums}
	}
	ch.Commit()
	return resp, imported
}

// errNoSubscription: a classic member's subscription is not known here.
var errNoSubscription = errors.New("no subscription")

// errRevocationInFlight: a task a classic member is still revoking is also
// another member's. Kafka's cooperative leader never assigns so; the takeover
// waits for the upstream group to settle rather than guess who runs it.
var errRevocationInFlight = errors.New("a cooperative revocation is in flight upstream")

// takeoverTopologyRefusal is the answer to a takeover whose topology is not
// ready for a reason other than missing internal topics (those are created
// and the takeover goes on): nil when it may go on. Incorrectly
// partitioned internal topics never fix themselves: STREAMS_INVALID_TOPOLOGY
// with Kafka's status and detail (a joined member would get the status and
// fail with a TopologyException). Missing source topics may be on their way
// (the image is fetched before each attempt, migration.MaybeTakeOver):
// retriable, at the paced rate.
func takeoverTopologyRefusal(c *configuredTopology) (*kerr.Error, string) {
	switch c.Status() {
	case -1, StatusMissingInternalTopics:
		return nil, ""
	case StatusIncorrectlyPartitionedTopics:
		return kerr.StreamsInvalidTopology, "cannot succeed: INCORRECTLY_PARTITIONED_TOPICS: " + c.Err.Message
	case StatusMissingSourceTopics:
		return kerr.CoordinatorLoadInProgress, "waits for its source topics: MISSING_SOURCE_TOPICS: " + c.Err.Message
	default:
		return kerr.CoordinatorLoadInProgress, "waits for its topology to be ready: " + c.Err.Message
	}
}
