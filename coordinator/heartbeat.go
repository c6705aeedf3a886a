package coordinator

import (
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/topology"
)

// heartbeat runs one validated StreamsGroupHeartbeat on the group's queue.
func (c *Coordinator) heartbeat(s *shard, req *kmsg.StreamsGroupHeartbeatRequest, client ClientInfo) *kmsg.StreamsGroupHeartbeatResponse {
	ch := c.newChange(s)
	resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	resp.Version = req.Version
	var err error
	if req.MemberEpoch == leaveGroupMemberEpoch || req.MemberEpoch == leaveGroupStaticMemberEpoch {
		err = ch.leave(req, resp)
	} else {
		err = ch.heartbeat(req, client, resp)
	}
	if err != nil {
		ch.rollback()
		var ce *coordError
		if !errors.As(err, &ce) {
			ce = errorf(kerr.UnknownServerError, "%v", err)
		}
		return heartbeatError(req, ce)
	}
	if err := ch.commit(); err != nil {
		return heartbeatError(req, errorf(kerr.CoordinatorNotAvailable, "%v", err))
	}
	return resp
}

// heartbeat is the main path (member epoch ≥ 0), step by step as Kafka 4.4's
// GroupMetadataManager.streamsGroupHeartbeat.
func (ch *change) heartbeat(req *kmsg.StreamsGroupHeartbeatRequest, client ClientInfo, resp *kmsg.StreamsGroupHeartbeatResponse) error {
	joining := req.MemberEpoch == 0

	// 1. The group.
	created := false
	if ch.g == nil {
		if !joining {
			return errorf(kerr.GroupIDNotFound, "Streams group %s not found.", req.Group)
		}
		ch.g = newGroup(req.Group)
		ch.s.group = ch.g
		created = true
		ch.created = true
		if v := ch.c.takeClaim(req.Group); v != nil {
			ch.emit(newOwnershipRecord(ch.g.ID, v))
		}
	}
	g := ch.g
	wasEmpty := len(g.Members) == 0

	// 2. The member.
	var instanceID string
	if req.InstanceID != nil {
		instanceID = *req.InstanceID
	}
	var (
		m        *Member
		replaced *Member // the released static member this one replaces
	)
	if instanceID != "" {
		ownerID, known := g.staticMembers[instanceID]
		if joining {
			if known {
				old := g.Members[ownerID]
				if old.MemberEpoch() != leaveGroupStaticMemberEpoch {
					return errorf(kerr.UnreleasedInstanceID, "Static member %s with instance id %s cannot join the group because the instance id is owned by %s member.", req.MemberID, instanceID, ownerID)
				}
				replaced = old
			} else {
				if err := ch.checkGroupSize(req.MemberID); err != nil {
					return err
				}
				m = g.Members[req.MemberID]
			}
		} else {
			if !known {
				return errorf(kerr.UnknownMemberID, "Instance id %s is unknown.", instanceID)
			}
			if ownerID != req.MemberID {
				return errorf(kerr.FencedInstanceID, "Static member %s with instance id %s was fenced by member %s.", req.MemberID, instanceID, ownerID)
			}
			m = g.Members[ownerID]
		}
	} else {
		m = g.Members[req.MemberID]
		if joining && m == nil {
			if err := ch.checkGroupSize(req.MemberID); err != nil {
				return err
			}
		}
		if !joining && m == nil {
			return errorf(kerr.UnknownMemberID, "Member %s is not a member of group %s.", req.MemberID, g.ID)
		}
	}
	if !joining {
		if err := checkMemberEpoch(m, req); err != nil {
			return err
		}
	}

	// 3. The member's metadata: null fields keep their value.
	var oldMeta *MemberMetadataValue
	switch {
	case replaced != nil:
		oldMeta = replaced.Meta
	case m != nil:
		oldMeta = m.Meta
	}
	meta, err := ch.classicMetadata(m, updatedMemberMetadata(oldMeta, req, client))
	if err != nil {
		return err
	}

	// 4. The topology, checked before anything is written.
	topo := g.Topology
	storeTopology := false
	var reqTopo topology.Topology
	if req.Topology != nil {
		reqTopo = topologyFromRequest(req.Topology)
		switch {
		case topo == nil:
			topo, storeTopology = &reqTopo, true
		case reqTopo.Epoch >= topo.Epoch && !topologyEqual(reqTopo, *topo):
			return errorf(kerr.InvalidRequest, "Topology updates are not supported yet.")
		}
	}
	if topo == nil {
		// Only possible if the records lost the topology; the member must
		// rejoin to bring it.
		return errorf(kerr.UnknownMemberID, "Streams group %s has no topology; rejoin.", g.ID)
	}

	// 5. The topic configuration, computed in memory.
	configured, hash, err := ch.configureTopology(topo)
	if err != nil {
		return err
	}
	validatedEpoch := int32(-1)
	if configured.ready() {
		validatedEpoch = topo.Epoch
		if err := validateOwnedTasks(req, configured); err != nil {
			return err
		}
	}

	// Everything that can fail has been checked: write the member. Each
	// reason for a new group epoch is kept for its log line.
	var bump []string
	switch {
	case replaced != nil:
		m = ch.replaceStaticMember(replaced, req.MemberID)
		if staticMetadataChanged(oldMeta, meta) {
			bump = append(bump, bumpStaticMemberMetadata)
		}
	case m == nil:
		m = &Member{ID: req.MemberID}
		bump = append(bump, bumpMemberJoined)
	case instanceID != "" && oldMeta != nil:
		if staticMetadataChanged(oldMeta, meta) {
			bump = append(bump, bumpStaticMemberMetadata)
		}
	case !meta.equal(m.Meta):
		bump = append(bump, bumpMemberMetadata)
	}
	if !meta.equal(m.Meta) || classicChanged(m.Meta, meta) {
		ch.emit(newMemberRecord(g.ID, m.ID, meta))
		m = g.Members[m.ID]
	}
	if storeTopology {
		ch.emit(newTopologyRecord(g.ID, reqTopo))
		bump = append(bump, bumpTopology)
	}
	if hash != g.MetadataHash {
		bump = append(bump, bumpMetadata)
	}
	if validatedEpoch != g.ValidatedTopologyEpoch {
		bump = append(bump, bumpTopologyValidated)
	}
	assignmentConfigs := g.LastAssignmentConfigs
	if !ch.cfg.sameAssignmentConfigs(assignmentConfigs) {
		assignmentConfigs = ch.cfg.assignmentConfigs()
		bump = append(bump, bumpAssignmentConfigs)
	}
	if req.TaskOffsets != nil {
		m.TaskOffsets = req.TaskOffsets
	}
	if req.TaskEndOffsets != nil {
		m.TaskEndOffsets = req.TaskEndOffsets
	}

	// 6-7. The group epoch.
	if len(bump) > 0 {
		ch.bumpGroupEpoch(m.ID, GroupMetadataValue{
			MetadataHash:           hash,
			ValidatedTopologyEpoch: validatedEpoch,
			LastAssignmentConfigs:  assignmentConfigs,
		}, bump)
		// 8. The initial rebalance delay lets more members join before the
		// first assignment.
		if wasEmpty && ch.cfg.InitialRebalanceDelay > 0 && !ch.hasTimer(initialDelayTimerKey) {
			ch.schedule(initialDelayTimerKey, ch.cfg.InitialRebalanceDelay, func(f *change) {
				f.maybeComputeTargetAssignment()
			})
		}
	}

	// 9. The target assignment.
	var statuses []kmsg.StreamsGroupHeartbeatResponseStatus
	if meta.TopologyEpoch < topo.Epoch {
		statuses = append(statuses, kmsg.StreamsGroupHeartbeatResponseStatus{
			StatusCode:   StatusStaleTopology,
			StatusDetail: fmt.Sprintf("The member's topology epoch %d is behind the group's topology epoch %d.", meta.TopologyEpoch, topo.Epoch),
		})
	}
	targetEpoch := g.AssignmentEpoch
	target := g.Target[m.ID]
	if g.GroupEpoch > g.AssignmentEpoch {
		switch {
		case ch.hasTimer(initialDelayTimerKey):
			// The first members get an empty assignment until the delay ends.
			targetEpoch = max(1, g.AssignmentEpoch)
			target = TaskSets{}
			statuses = append(statuses, kmsg.StreamsGroupHeartbeatResponseStatus{
				StatusCode:   StatusAssignmentDelayed,
				StatusDetail: "Assignment delayed due to the configured initial rebalance delay.",
			})
		case ch.assignmentIntervalRunning():
			ch.scheduleAssignmentInterval()
			statuses = append(statuses, kmsg.StreamsGroupHeartbeatResponseStatus{
				StatusCode:   StatusAssignmentDelayed,
				StatusDetail: "Assignment delayed due to the configured assignment interval.",
			})
		default:
			if err := ch.computeTargetAssignment(); err != nil {
				return errorf(kerr.UnknownServerError, "Failed to compute a new target assignment for epoch %d: %v", g.GroupEpoch, err)
			}
			targetEpoch = g.AssignmentEpoch
			target = g.Target[m.ID]
		}
	}

	// 10. Reconciliation.
	var owned *TaskSets
	if req.ActiveTasks != nil && req.StandbyTasks != nil && req.WarmupTasks != nil {
		owned = &TaskSets{tasksFromKmsg(req.ActiveTasks), tasksFromKmsg(req.StandbyTasks), tasksFromKmsg(req.WarmupTasks)}
	}
	before := m.current()
	next, err := reconcile(before, m.processID(), targetEpoch, target, owned, g)
	if err != nil {
		return errorf(kerr.FencedMemberEpoch, "%v", err)
	}
	if next != before || m.Current == nil {
		ch.emit(newCurrentAssignmentRecord(g.ID, m.ID, next))
		ch.logDebug(m.ID).Msgf("[GroupId %s][MemberId %s] Member's new assignment state: epoch=%d, previousEpoch=%d, state=%s, assignedTasks=%v and tasksPendingRevocation=%v.",
			g.ID, m.ID, next.MemberEpoch, next.PreviousMemberEpoch, next.State, next.Assigned, next.PendingRevocation)
	}
	if next.State == MemberUnrevokedTasks {
		if before.State != MemberUnrevokedTasks || before.MemberEpoch != next.MemberEpoch || !ch.hasTimer(rebalanceTimerKey(m.ID)) {
			ch.scheduleRebalance(m.ID, next.MemberEpoch, rebalanceTimeout(m))
		}
	} else {
		ch.cancel(rebalanceTimerKey(m.ID))
	}

	// 11. Session, shutdown, response.
	ch.scheduleSession(m.ID)
	if req.ShutdownApplication && g.mem.shutdownRequester == "" {
		g.mem.shutdownRequester = m.ID // the first requester is reported
	}
	assignedChanged := next != before && (!before.Assigned.equal(next.Assigned) || !sameEpochs(before, next))
	endpointChanged := !endpointEqual(oldMeta, meta)
	if !created && (endpointChanged || (assignedChanged && meta.UserEndpoint != nil)) {
		// Peers learn the new endpoint map through the epoch. A group created
		// by this heartbeat stays at 0 (Kafka does not persist the bump made
		// on the group it is creating).
		g.mem.endpointEpoch++
	}

	resp.MemberID = m.ID
	resp.MemberEpoch = next.MemberEpoch
	ch.fillIntervals(resp)
	if !configured.ready() {
		statuses = append(statuses, kmsg.StreamsGroupHeartbeatResponseStatus{StatusCode: configured.status(), StatusDetail: ch.configurationDetail(configured)})
	}
	if r := g.mem.shutdownRequester; r != "" {
		statuses = append(statuses, kmsg.StreamsGroupHeartbeatResponseStatus{
			StatusCode:   StatusShutdownApplication,
			StatusDetail: fmt.Sprintf("Streams group member %s encountered a fatal error and requested a shutdown for the entire application.", r),
		})
	}
	if req.Version >= 1 {
		if missing := missingClientTags(ch.cfg.RackAwareAssignmentTags, meta.ClientTags); len(missing) > 0 {
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
	if joining || assignedChanged {
		resp.ActiveTasks = tasksToKmsg(next.Assigned.Active)
		resp.StandbyTasks = tasksToKmsg(next.Assigned.Standby)
		resp.WarmupTasks = tasksToKmsg(next.Assigned.Warmup)
	}
	resp.EndpointInformationEpoch = g.mem.endpointEpoch
	if req.EndpointInformationEpoch != g.mem.endpointEpoch {
		resp.PartitionsByUserEndpoint = partitionsByUserEndpoint(g, configured, m.ID)
	}
	return nil
}

func (ch *change) fillIntervals(resp *kmsg.StreamsGroupHeartbeatResponse) {
	resp.HeartbeatIntervalMillis = int32(ch.cfg.HeartbeatInterval.Milliseconds())
	resp.TaskOffsetIntervalMillis = int32(ch.cfg.TaskOffsetInterval.Milliseconds())
	resp.AcceptableRecoveryLag = ch.cfg.AcceptableRecoveryLag
}

// StreamsGroupHeartbeat serves one heartbeat.
func (c *Coordinator) StreamsGroupHeartbeat(req *kmsg.StreamsGroupHeartbeatRequest, client ClientInfo, respond func(*kmsg.StreamsGroupHeartbeatResponse)) {
	if resp := validateHeartbeat(req); resp != nil {
		respond(resp)
		return
	}
	c.run(req.Group, func(s *shard) {
		respond(c.heartbeat(s, req, client))
	}, func(e *coordError) { respond(heartbeatError(req, e)) })
}
