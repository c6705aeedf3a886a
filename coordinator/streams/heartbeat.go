package streams

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams/topology"
)

// StreamsGroupHeartbeat is the operation of one validated
// StreamsGroupHeartbeat: a leave (member epoch -1 or -2) or the main path.
// A failure is answered and rolls the change back; otherwise the change
// commits, and the answer leaves once its records are in the log.
func (ch *Change) StreamsGroupHeartbeat(req *kmsg.StreamsGroupHeartbeatRequest, client ClientInfo) *kmsg.StreamsGroupHeartbeatResponse {
	resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	resp.Version = req.Version
	var err error
	if req.MemberEpoch == LeaveGroupMemberEpoch || req.MemberEpoch == leaveGroupStaticMemberEpoch {
		err = ch.Leave(req, resp)
	} else {
		err = ch.Heartbeat(req, client, resp)
	}
	if err != nil {
		ch.RollBack()
		return HeartbeatError(req, asCoordError(err))
	}
	ch.Commit()
	return resp
}

// Heartbeat is the main path (member epoch ≥ 0), Kafka 4.4's
// GroupMetadataManager.streamsGroupHeartbeat in its named steps. The steps
// up to the topology only check and compute: a failure there writes nothing.
func (ch *Change) Heartbeat(req *kmsg.StreamsGroupHeartbeatRequest, client ClientInfo, resp *kmsg.StreamsGroupHeartbeatResponse) error {
	hb := &streamsHeartbeat{ch: ch, req: req, client: client, joining: req.MemberEpoch == 0}
	if err := hb.getOrCreateGroup(); err != nil {
		return err
	}
	if err := hb.getOrCreateMember(); err != nil {
		return err
	}
	if err := hb.updateMemberMetadata(); err != nil {
		return err
	}
	if err := hb.checkTopology(); err != nil {
		return err
	}
	// Everything that can fail has been checked: write the member.
	hb.writeMember()
	hb.maybeBumpGroupEpoch()
	if err := hb.updateTargetAssignment(); err != nil {
		return err
	}
	if err := hb.maybeReconcile(); err != nil {
		return err
	}
	hb.updateSession()
	hb.buildResponse(resp)
	ch.noteConn(hb.m.ID, client)
	return nil
}

// streamsHeartbeat is one heartbeat between its steps: what each step
// found, for the steps after it.
type streamsHeartbeat struct {
	ch      *Change
	req     *kmsg.StreamsGroupHeartbeatRequest
	client  ClientInfo
	joining bool // member epoch 0

	created  bool // this heartbeat created the group
	wasEmpty bool // the group had no members before it

	instanceID string
	m          *Member // nil for a new member until writeMember
	replaced   *Member // the released static member this one replaces
	// byProcess: the other-protocol members of the joining process this
	// new member replaces (replace.go).
	byProcess []*Member

	oldMeta, meta *MemberMetadataValue

	topo          *topology.Topology // the group's, or the request's for a new group
	reqTopo       topology.Topology
	storeTopology bool
	configured    *configuredTopology
	hash          uint64 // the metadata hash of the topology's topics
	// validatedEpoch is the topology epoch once it is configured, else -1.
	validatedEpoch    int32
	assignmentConfigs []KeyValue

	// bump holds each reason for a new group epoch, for its log line.
	bump     []string
	statuses []kmsg.StreamsGroupHeartbeatResponseStatus

	targetEpoch     int32
	target          TaskSets
	before, next    *CurrentMemberAssignmentValue
	assignedChanged bool
}

// getOrCreateGroup is step 1: a join creates the group (with the
// ownership claim waiting for it), any other heartbeat needs it.
func (hb *streamsHeartbeat) getOrCreateGroup() error {
	ch, req := hb.ch, hb.req
	if ch.Group == nil {
		if !hb.joining {
			return Errorf(kerr.GroupIDNotFound, "Streams group %s not found.", req.Group)
		}
		ch.Group = newGroup(req.Group)
		hb.created = true
		ch.Created = true
		if v := ch.takeClaim(); v != nil {
			ch.emit(newOwnershipRecord(ch.Group.ID, v))
		}
	}
	hb.wasEmpty = len(ch.Group.Members) == 0
	return nil
}

// getOrCreateMember is step 2 (Kafka's getOrMaybeCreateDynamic- and
// ...StaticStreamsGroupMember, then throwIfStreamsGroupMemberEpochIsInvalid):
// the member, or the released static member a join replaces; a new member
// is created in writeMember.
func (hb *streamsHeartbeat) getOrCreateMember() error {
	ch, req, g := hb.ch, hb.req, hb.ch.Group
	if req.InstanceID != nil {
		hb.instanceID = *req.InstanceID
	}
	if hb.instanceID != "" {
		ownerID, known := g.StaticMembers[hb.instanceID]
		if hb.joining {
			if known {
				old := g.Members[ownerID]
				if old.MemberEpoch() != leaveGroupStaticMemberEpoch && ch.replacesStaticByInstance(old) {
					ch.releaseForReplacement(old, req.MemberID)
				}
				if old.MemberEpoch() != leaveGroupStaticMemberEpoch {
					return Errorf(kerr.UnreleasedInstanceID, "Static member %s with instance id %s cannot join the group because the instance id is owned by %s member.", req.MemberID, hb.instanceID, ownerID)
				}
				hb.replaced = old
			} else {
				hb.m = g.Members[req.MemberID]
				if err := hb.maybeReplaceByProcess(); err != nil {
					return err
				}
			}
		} else {
			if !known {
				return Errorf(kerr.UnknownMemberID, "Instance id %s is unknown.", hb.instanceID)
			}
			if ownerID != req.MemberID {
				return Errorf(kerr.FencedInstanceID, "Static member %s with instance id %s was fenced by member %s.", req.MemberID, hb.instanceID, ownerID)
			}
			hb.m = g.Members[ownerID]
		}
	} else {
		hb.m = g.Members[req.MemberID]
		if hb.joining && hb.m == nil {
			if err := hb.maybeReplaceByProcess(); err != nil {
				return err
			}
		}
		if !hb.joining && hb.m == nil {
			return Errorf(kerr.UnknownMemberID, "Member %s is not a member of group %s.", req.MemberID, g.ID)
		}
	}
	if !hb.joining {
		return checkMemberEpoch(hb.m, req)
	}
	return nil
}

// maybeReplaceByProcess: a new member replaces the other-protocol members of
// its process that are gone from the wire (replace.go); otherwise it needs
// room in the group.
func (hb *streamsHeartbeat) maybeReplaceByProcess() error {
	if hb.m != nil {
		return nil
	}
	hb.ch.successorJoined(hb.req.MemberID)
	hb.byProcess = hb.ch.replacedByProcess(hb.req.MemberID, hb.req.ProcessID)
	if len(hb.byProcess) > 0 {
		return nil
	}
	hb.ch.releaseDeparted(hb.req.MemberID, hb.req.ProcessID)
	return hb.ch.checkGroupSize(hb.req.MemberID)
}

// updateMemberMetadata is step 3: the member's new metadata; null fields
// keep their value.
func (hb *streamsHeartbeat) updateMemberMetadata() error {
	switch {
	case hb.replaced != nil:
		hb.oldMeta = hb.replaced.Meta
	case hb.m != nil:
		hb.oldMeta = hb.m.Meta
	}
	meta, err := hb.ch.classicMetadata(hb.m, updatedMemberMetadata(hb.oldMeta, hb.req, hb.client))
	hb.meta = meta
	if err != nil {
		return err
	}
	if meta != hb.oldMeta {
		// The request's own fields were checked; merged with the kept
		// ones the record may still be too large.
		if ce := checkMemberRecord(hb.ch.Group.ID, hb.req.MemberID, meta); ce != nil {
			return ce
		}
	}
	return nil
}

// checkTopology is steps 4 and 5: the topology, checked before anything is
// written, and its topic configuration, computed in memory (starting the
// creation of missing internal topics).
func (hb *streamsHeartbeat) checkTopology() error {
	ch, req, g := hb.ch, hb.req, hb.ch.Group
	hb.topo = g.Topology
	if req.Topology != nil {
		hb.reqTopo = TopologyFromRequest(req.Topology)
		switch {
		case hb.topo == nil:
			// A copy of its own: the group keeps it, and a pointer into
			// hb would put every heartbeat's steps on the heap.
			topo := hb.reqTopo
			hb.topo, hb.storeTopology = &topo, true
		case hb.reqTopo.Epoch >= hb.topo.Epoch && !topologyEqual(hb.reqTopo, *hb.topo):
			return Errorf(kerr.InvalidRequest, "Topology updates are not supported yet.")
		}
	}
	if hb.topo == nil {
		// Only possible if the records lost the topology; the member must
		// rejoin to bring it.
		return Errorf(kerr.UnknownMemberID, "Streams group %s has no topology; rejoin.", g.ID)
	}
	configured, hash, err := ch.configureTopology(hb.topo)
	if err != nil {
		return err
	}
	hb.configured, hb.hash = configured, hash
	hb.validatedEpoch = -1
	if configured.IsReady() {
		hb.validatedEpoch = hb.topo.Epoch
		if err := validateOwnedTasks(req, configured); err != nil {
			return err
		}
	}
	return nil
}

// writeMember writes the member's metadata and a new topology, and notes
// every reason for a new group epoch (Kafka's
// hasStreamsMemberMetadataChanged and the topology and metadata checks).
func (hb *streamsHeartbeat) writeMember() {
	ch, req, g := hb.ch, hb.req, hb.ch.Group
	switch {
	case hb.replaced != nil:
		hb.m = ch.replaceStaticMember(hb.replaced, req.MemberID)
		if staticMetadataChanged(hb.oldMeta, hb.meta) {
			hb.bump = append(hb.bump, bumpStaticMemberMetadata)
		}
	case hb.m == nil && len(hb.byProcess) > 0:
		hb.m = ch.replaceMembers(hb.byProcess, req.MemberID, hb.meta)
		hb.bump = append(hb.bump, BumpMemberJoined)
	case hb.m == nil:
		hb.m = &Member{ID: req.MemberID}
		hb.bump = append(hb.bump, BumpMemberJoined)
	case hb.instanceID != "" && hb.oldMeta != nil:
		if staticMetadataChanged(hb.oldMeta, hb.meta) {
			hb.bump = append(hb.bump, bumpStaticMemberMetadata)
		}
	case !hb.meta.Equal(hb.m.Meta):
		hb.bump = append(hb.bump, bumpMemberMetadata)
	}
	if !hb.meta.Equal(hb.m.Meta) || classicChanged(hb.m.Meta, hb.meta) {
		ch.emit(newMemberRecord(g.ID, hb.m.ID, hb.meta))
		hb.m = g.Members[hb.m.ID]
	}
	if hb.storeTopology {
		ch.emit(newTopologyRecord(g.ID, hb.reqTopo))
		hb.bump = append(hb.bump, BumpTopology)
	}
	if hb.hash != g.MetadataHash {
		hb.bump = append(hb.bump, bumpMetadata)
	}
	if hb.validatedEpoch != g.ValidatedTopologyEpoch {
		hb.bump = append(hb.bump, bumpTopologyValidated)
	}
	hb.assignmentConfigs = g.LastAssignmentConfigs
	if !ch.Config.sameAssignmentConfigs(hb.assignmentConfigs) {
		hb.assignmentConfigs = ch.Config.AssignmentConfigs()
		hb.bump = append(hb.bump, bumpAssignmentConfigs)
	}
	if req.TaskOffsets != nil {
		hb.m.TaskOffsets = req.TaskOffsets
	}
	if req.TaskEndOffsets != nil {
		hb.m.TaskEndOffsets = req.TaskEndOffsets
	}
	if req.TaskOffsets != nil || req.TaskEndOffsets != nil {
		hb.m.Report.At = ch.Now
	}
	// A new group epoch for a caught-up warm-up, unless one is already
	// pending: that assignment sees the same offsets.
	if (req.TaskOffsets != nil || req.TaskEndOffsets != nil) && len(hb.bump) == 0 && g.GroupEpoch <= g.AssignmentEpoch &&
		warmupCaughtUp(g, hb.m, ch.Config.AcceptableRecoveryLag) {
		hb.bump = append(hb.bump, bumpWarmupCaughtUp)
	}
}

// maybeBumpGroupEpoch is steps 6 to 8: a new group epoch if anything
// changed, and the initial rebalance delay of a group's first members,
// which lets more members join before the first assignment.
func (hb *streamsHeartbeat) maybeBumpGroupEpoch() {
	ch := hb.ch
	if len(hb.bump) == 0 {
		return
	}
	ch.bumpGroupEpoch(hb.m.ID, GroupMetadataValue{
		MetadataHash:           hb.hash,
		ValidatedTopologyEpoch: hb.validatedEpoch,
		LastAssignmentConfigs:  hb.assignmentConfigs,
	}, hb.bump)
	if hb.wasEmpty && ch.Config.InitialRebalanceDelay > 0 && !ch.hasTimer(initialDelayTimerKey) {
		ch.schedule(initialDelayTimerKey, ch.Config.InitialRebalanceDelay, func(f *Change) {
			f.maybeComputeTargetAssignment()
		})
	}
}

// updateTargetAssignment is step 9 (Kafka's updateStreamsTargetAssignment):
// the member's target, computed anew when the group epoch is ahead of the
// assignment epoch, unless the initial delay or the assignment interval
// holds it back.
func (hb *streamsHeartbeat) updateTargetAssignment() error {
	ch, g := hb.ch, hb.ch.Group
	if hb.meta.TopologyEpoch < hb.topo.Epoch {
		hb.statuses = append(hb.statuses, kmsg.StreamsGroupHeartbeatResponseStatus{
			StatusCode:   StatusStaleTopology,
			StatusDetail: fmt.Sprintf("The member's topology epoch %d is behind the group's topology epoch %d.", hb.meta.TopologyEpoch, hb.topo.Epoch),
		})
	}
	hb.targetEpoch = g.AssignmentEpoch
	hb.target = g.Target[hb.m.ID]
	if g.GroupEpoch <= g.AssignmentEpoch {
		return nil
	}
	switch {
	case ch.hasTimer(initialDelayTimerKey):
		// The first members get an empty assignment until the delay ends.
		hb.targetEpoch = max(1, g.AssignmentEpoch)
		hb.target = TaskSets{}
		hb.statuses = append(hb.statuses, kmsg.StreamsGroupHeartbeatResponseStatus{
			StatusCode:   StatusAssignmentDelayed,
			StatusDetail: "Assignment delayed due to the configured initial rebalance delay.",
		})
	case ch.assignmentIntervalRunning():
		ch.scheduleAssignmentInterval()
		hb.statuses = append(hb.statuses, kmsg.StreamsGroupHeartbeatResponseStatus{
			StatusCode:   StatusAssignmentDelayed,
			StatusDetail: "Assignment delayed due to the configured assignment interval.",
		})
	default:
		if err := ch.computeTargetAssignment(); err != nil {
			return Errorf(kerr.UnknownServerError, "Failed to compute a new target assignment for epoch %d: %v", g.GroupEpoch, err)
		}
		hb.targetEpoch = g.AssignmentEpoch
		hb.target = g.Target[hb.m.ID]
	}
	return nil
}

// maybeReconcile is step 10 (Kafka's maybeReconcile): the member's next
// current assignment (current_assignment.go) and its rebalance timer while
// it revokes.
func (hb *streamsHeartbeat) maybeReconcile() error {
	ch, req, g, m := hb.ch, hb.req, hb.ch.Group, hb.m
	var owned *TaskSets
	if req.ActiveTasks != nil && req.StandbyTasks != nil && req.WarmupTasks != nil {
		owned = &TaskSets{Active: TasksFromKmsg(req.ActiveTasks), Standby: TasksFromKmsg(req.StandbyTasks), Warmup: TasksFromKmsg(req.WarmupTasks)}
	}
	before := m.CurrentAssignment()
	next, err := reconcile(before, m.ProcessID(), hb.targetEpoch, hb.target, owned, g)
	if err != nil {
		return Errorf(kerr.FencedMemberEpoch, "%v", err)
	}
	hb.before, hb.next = before, next
	if next != before || m.Current == nil {
		ch.emit(newCurrentAssignmentRecord(g.ID, m.ID, next))
		ch.logDebug(m.ID).Msgf("[GroupId %s][MemberId %s] Member's new assignment state: epoch=%d, previousEpoch=%d, state=%s, assignedTasks=%v and tasksPendingRevocation=%v.",
			g.ID, m.ID, next.MemberEpoch, next.PreviousMemberEpoch, next.State, next.Assigned, next.PendingRevocation)
	}
	if next.State == MemberUnrevokedTasks {
		if before.State != MemberUnrevokedTasks || before.MemberEpoch != next.MemberEpoch || !ch.hasTimer(RebalanceTimerKey(m.ID)) {
			ch.scheduleRebalance(m.ID, next.MemberEpoch, RebalanceTimeout(m))
		}
	} else {
		ch.cancel(RebalanceTimerKey(m.ID))
	}
	hb.assignedChanged = next != before && (!before.Assigned.Equal(next.Assigned) || !sameEpochs(before, next))
	return nil
}

// updateSession is the first half of step 11: the session timer, the
// first shutdown request, and the endpoint epoch peers learn a new
// endpoint map through.
func (hb *streamsHeartbeat) updateSession() {
	ch, g, m := hb.ch, hb.ch.Group, hb.m
	ch.scheduleSession(m.ID)
	if hb.req.ShutdownApplication && g.Mem.shutdownRequester == "" {
		g.Mem.shutdownRequester = m.ID // the first requester is reported
	}
	endpointChanged := !endpointEqual(hb.oldMeta, hb.meta)
	if !hb.created && (endpointChanged || (hb.assignedChanged && hb.meta.UserEndpoint != nil)) {
		// A group created by this heartbeat stays at 0 (Kafka does not
		// persist the bump made on the group it is creating).
		g.Mem.EndpointEpoch++
	}
}

// buildResponse is the rest of step 11: epochs, intervals, statuses, the
// tasks when they changed, and the endpoint map when the member's is old.
func (hb *streamsHeartbeat) buildResponse(resp *kmsg.StreamsGroupHeartbeatResponse) {
	ch, req, g := hb.ch, hb.req, hb.ch.Group
	resp.MemberID = hb.m.ID
	resp.MemberEpoch = hb.next.MemberEpoch
	ch.fillIntervals(resp)
	statuses := hb.statuses
	missingSourceTopics := false
	if !hb.configured.IsReady() {
		statuses = append(statuses, kmsg.StreamsGroupHeartbeatResponseStatus{StatusCode: hb.configured.Status(), StatusDetail: ch.configurationDetail(hb.configured)})
		missingSourceTopics = hb.configured.Status() == StatusMissingSourceTopics
	}
	resp.HeartbeatIntervalMillis = int32(ch.heartbeatInterval(hb.m, hb.next, missingSourceTopics).Milliseconds())
	if r := g.Mem.shutdownRequester; r != "" {
		statuses = append(statuses, kmsg.StreamsGroupHeartbeatResponseStatus{
			StatusCode:   StatusShutdownApplication,
			StatusDetail: fmt.Sprintf("Streams group member %s encountered a fatal error and requested a shutdown for the entire application.", r),
		})
	}
	if req.Version >= 1 {
		if missing := missingClientTags(ch.Config.RackAwareAssignmentTags, hb.meta.ClientTags); len(missing) > 0 {
			statuses = append(statuses, kmsg.StreamsGroupHeartbeatResponseStatus{
				StatusCode:   StatusMissingClientTags,
				StatusDetail: fmt.Sprintf("Client tags missing for rack-aware assignment: %s", strings.Join(missing, ", ")),
			})
		}
	}
	// Kafka's Status defaults to an empty list, never null.
	if statuses == nil {
		statuses = []kmsg.StreamsGroupHeartbeatResponseStatus{}
	}
	resp.Status = statuses
	if hb.joining || hb.assignedChanged {
		resp.ActiveTasks = TasksToKmsg(hb.next.Assigned.Active)
		resp.StandbyTasks = TasksToKmsg(hb.next.Assigned.Standby)
		resp.WarmupTasks = TasksToKmsg(hb.next.Assigned.Warmup)
	}
	resp.EndpointInformationEpoch = g.Mem.EndpointEpoch
	if req.EndpointInformationEpoch != g.Mem.EndpointEpoch {
		resp.PartitionsByUserEndpoint = partitionsByUserEndpoint(g, hb.configured, hb.m.ID)
	}
}

func (ch *Change) fillIntervals(resp *kmsg.StreamsGroupHeartbeatResponse) {
	resp.HeartbeatIntervalMillis = int32(ch.Config.HeartbeatInterval.Milliseconds())
	resp.TaskOffsetIntervalMillis = int32(ch.Config.TaskOffsetInterval.Milliseconds())
	resp.AcceptableRecoveryLag = ch.Config.AcceptableRecoveryLag
}
