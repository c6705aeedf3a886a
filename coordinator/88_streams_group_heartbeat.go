package coordinator

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

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
	meta := updatedMemberMetadata(oldMeta, req, client)

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

	// Everything that can fail has been checked: write the member.
	bump := false
	if replaced != nil {
		m = ch.replaceStaticMember(replaced, req.MemberID)
		bump = staticMetadataChanged(oldMeta, meta)
	} else if m == nil {
		m = &Member{ID: req.MemberID}
		bump = true
	} else if instanceID != "" && oldMeta != nil {
		bump = staticMetadataChanged(oldMeta, meta)
	} else {
		bump = !meta.equal(m.Meta)
	}
	if !meta.equal(m.Meta) {
		ch.emit(Record{Type: RecordMemberMetadata, MemberID: m.ID, Value: meta})
		m = g.Members[m.ID]
	}
	if storeTopology {
		ch.emit(Record{Type: RecordTopology, Value: &TopologyValue{Topology: reqTopo}})
		bump = true
	}
	if hash != g.MetadataHash || validatedEpoch != g.ValidatedTopologyEpoch {
		bump = true
	}
	assignmentConfigs := g.LastAssignmentConfigs
	if !ch.cfg.sameAssignmentConfigs(assignmentConfigs) {
		assignmentConfigs = ch.cfg.assignmentConfigs()
		bump = true
	}
	if req.TaskOffsets != nil {
		m.TaskOffsets = req.TaskOffsets
	}
	if req.TaskEndOffsets != nil {
		m.TaskEndOffsets = req.TaskEndOffsets
	}

	// 6-7. The group epoch.
	if bump {
		ch.emit(Record{Type: RecordGroupMetadata, Value: &GroupMetadataValue{
			Epoch:                  g.GroupEpoch + 1,
			MetadataHash:           hash,
			ValidatedTopologyEpoch: validatedEpoch,
			LastAssignmentConfigs:  assignmentConfigs,
		}})
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
		ch.emit(Record{Type: RecordCurrentMemberAssignment, MemberID: m.ID, Value: next})
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

func (ch *change) checkGroupSize(memberID string) error {
	max := ch.c.maxGroupSize()
	if max > 0 && len(ch.g.Members) >= max && ch.g.Members[memberID] == nil {
		return errorf(kerr.GroupMaxSizeReached, "The streams group has reached its maximum capacity of %d members.", max)
	}
	return nil
}

// checkMemberEpoch is Kafka's throwIfStreamsGroupMemberEpochIsInvalid. An
// older epoch is accepted only when it is the previous epoch and the member
// owns no more than it was given: the response that moved it on was lost.
func checkMemberEpoch(m *Member, req *kmsg.StreamsGroupHeartbeatRequest) error {
	cur := m.current()
	switch {
	case req.MemberEpoch > cur.MemberEpoch:
		return errorf(kerr.FencedMemberEpoch, "The streams group member has a greater member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", req.MemberEpoch, cur.MemberEpoch)
	case req.MemberEpoch < cur.MemberEpoch:
		if req.MemberEpoch == cur.PreviousMemberEpoch && req.ActiveTasks != nil && req.StandbyTasks != nil && req.WarmupTasks != nil &&
			tasksSubset(tasksFromKmsg(req.ActiveTasks), cur.Assigned.Active) &&
			tasksSubset(tasksFromKmsg(req.StandbyTasks), cur.Assigned.Standby) &&
			tasksSubset(tasksFromKmsg(req.WarmupTasks), cur.Assigned.Warmup) {
			return nil
		}
		return errorf(kerr.FencedMemberEpoch, "The streams group member has a smaller member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", req.MemberEpoch, cur.MemberEpoch)
	}
	return nil
}

// updatedMemberMetadata applies a request to a member's metadata: null
// fields keep the old value; a join always replaces the endpoint.
func updatedMemberMetadata(old *MemberMetadataValue, req *kmsg.StreamsGroupHeartbeatRequest, client ClientInfo) *MemberMetadataValue {
	if metadataUnchanged(old, req, client) {
		return old
	}
	v := &MemberMetadataValue{}
	if old != nil {
		*v = *old
	}
	if req.InstanceID != nil {
		v.InstanceID = *req.InstanceID
	}
	if req.RackID != nil {
		v.RackID = *req.RackID
	}
	if req.RebalanceTimeoutMillis != -1 {
		v.RebalanceTimeoutMs = req.RebalanceTimeoutMillis
	}
	if req.Topology != nil {
		v.TopologyEpoch = req.Topology.Epoch
	}
	v.ClientID = client.ClientID
	v.ClientHost = client.ClientHost
	if req.ProcessID != nil {
		v.ProcessID = *req.ProcessID
	}
	if req.ClientTags != nil {
		tags := make([]KeyValue, 0, len(req.ClientTags))
		for _, t := range req.ClientTags {
			tags = append(tags, KeyValue{t.Key, t.Value})
		}
		sort.Slice(tags, func(i, j int) bool { return tags[i].Key < tags[j].Key })
		v.ClientTags = tags
	}
	if req.MemberEpoch == 0 {
		v.UserEndpoint = nil
	}
	if e := req.UserEndpoint; e != nil {
		v.UserEndpoint = &Endpoint{Host: e.Host, Port: e.Port}
	}
	return v
}

// metadataUnchanged is the steady-state shortcut of updatedMemberMetadata: a
// heartbeat that only repeats what is known changes nothing.
func metadataUnchanged(old *MemberMetadataValue, req *kmsg.StreamsGroupHeartbeatRequest, client ClientInfo) bool {
	if old == nil || req.MemberEpoch == 0 || req.Topology != nil || req.ClientTags != nil || req.UserEndpoint != nil {
		return false
	}
	return (req.InstanceID == nil || *req.InstanceID == old.InstanceID) &&
		(req.RackID == nil || *req.RackID == old.RackID) &&
		(req.RebalanceTimeoutMillis == -1 || req.RebalanceTimeoutMillis == old.RebalanceTimeoutMs) &&
		(req.ProcessID == nil || *req.ProcessID == old.ProcessID) &&
		client.ClientID == old.ClientID && client.ClientHost == old.ClientHost
}

// staticMetadataChanged: for static members only these fields bump the
// group epoch (PR #22245), so a restart with the same identity keeps tasks.
func staticMetadataChanged(old, v *MemberMetadataValue) bool {
	if old == nil {
		return true
	}
	return old.TopologyEpoch != v.TopologyEpoch || old.RackID != v.RackID ||
		old.ProcessID != v.ProcessID || !keyValuesEqual(old.ClientTags, v.ClientTags)
}

func endpointEqual(old, v *MemberMetadataValue) bool {
	var a, b *Endpoint
	if old != nil {
		a = old.UserEndpoint
	}
	if v != nil {
		b = v.UserEndpoint
	}
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// sameEpochs compares the epochs of the assigned active tasks (pending ones
// are not sent to the member).
func sameEpochs(a, b *CurrentMemberAssignmentValue) bool {
	same := true
	forEachTask(b.Assigned.Active, func(t TaskID) {
		if a.ActiveEpochs[t] != b.ActiveEpochs[t] {
			same = false
		}
	})
	return same
}

// replaceStaticMember moves a released static member (epoch -2) to the new
// member id of the same instance, keeping its assignment: the old member's
// records are deleted and a copy under the new id is written (its metadata
// as it was, its target, its current assignment at epoch 0). The caller then
// writes the updated metadata if the request changed it.
func (ch *change) replaceStaticMember(old *Member, memberID string) *Member {
	g := ch.g
	target := g.Target[old.ID]
	cur := *old.current()
	meta := old.Meta
	if old.ID != memberID {
		ch.emit(Record{Type: RecordCurrentMemberAssignment, MemberID: old.ID})
		ch.emit(Record{Type: RecordTargetAssignmentMember, MemberID: old.ID})
		ch.emit(Record{Type: RecordMemberMetadata, MemberID: old.ID})
		ch.cancel(sessionTimerKey(old.ID))
		ch.cancel(rebalanceTimerKey(old.ID))
		ch.emit(Record{Type: RecordMemberMetadata, MemberID: memberID, Value: meta})
		ch.emit(Record{Type: RecordTargetAssignmentMember, MemberID: memberID, Value: &TargetAssignmentMemberValue{Tasks: target}})
	}
	cur.MemberEpoch = 0
	cur.PreviousMemberEpoch = 0
	cur.State = MemberStable
	cur.PendingRevocation = TaskSets{}
	cur.ActiveEpochs = restrictEpochs(cur.ActiveEpochs, cur.Assigned.Active, false, 0)
	ch.emit(Record{Type: RecordCurrentMemberAssignment, MemberID: memberID, Value: &cur})
	return g.Members[memberID]
}

// validateOwnedTasks rejects owned tasks outside the configured topology.
func validateOwnedTasks(req *kmsg.StreamsGroupHeartbeatRequest, c *configuredTopology) error {
	for _, l := range [3][]kmsg.TaskIDs{req.ActiveTasks, req.StandbyTasks, req.WarmupTasks} {
		for _, t := range l {
			s := c.subtopology(t.SubtopologyID)
			if s == nil {
				return errorf(kerr.InvalidRequest, "Subtopology %s does not exist in the topology.", t.SubtopologyID)
			}
			for _, p := range t.Partitions {
				if p < 0 || p >= s.NumTasks {
					return errorf(kerr.InvalidRequest, "Task %d for subtopology %s is invalid. Number of tasks for this subtopology: %d", p, t.SubtopologyID, s.NumTasks)
				}
			}
		}
	}
	return nil
}

func missingClientTags(required []string, tags []KeyValue) []string {
	var missing []string
	for _, r := range required {
		if !slices.ContainsFunc(tags, func(kv KeyValue) bool { return kv.Key == r }) {
			missing = append(missing, r)
		}
	}
	return missing
}

// configureTopology returns the group's configured topology, recomputing it
// when the topology or the metadata image changed, and starts the creation
// of missing internal topics. It also returns the metadata hash.
func (ch *change) configureTopology(topo *topology.Topology) (*configuredTopology, uint64, error) {
	g := ch.g
	img := ch.c.metadata.Image()
	mem := &g.mem
	if mem.configured == nil || mem.configuredFor != topo || mem.configuredVersion != img.Version() {
		mem.configured = &configuredTopology{ch.c.configure(*topo, imagePartitions(img))}
		mem.configuredFor = topo
		mem.configuredVersion = img.Version()
		mem.configuredHash = metadataHash(img, requiredTopics(topo))
		if !mem.configured.ready() {
			ch.c.metadata.RequestRefresh(requiredTopics(topo))
		}
	}
	cfgd := mem.configured
	if err := cfgd.failure(); err != nil {
		return nil, 0, err
	}
	if len(cfgd.TopicsToCreate) > 0 {
		ch.createInternalTopics(cfgd.TopicsToCreate)
	}
	return cfgd, mem.configuredHash, nil
}

// createInternalTopics asks the topic creator for the missing internal
// topics, skipping those already being created (as Kafka does on every
// heartbeat that finds them missing).
func (ch *change) createInternalTopics(topics []topology.TopicToCreate) {
	c, g := ch.c, ch.g
	if c.creator == nil {
		return
	}
	if g.mem.creatingTopics == nil {
		g.mem.creatingTopics = map[string]bool{}
	}
	var todo []CreatableTopic
	for _, t := range topics {
		if !g.mem.creatingTopics[t.Name] {
			g.mem.creatingTopics[t.Name] = true
			ct := CreatableTopic{Name: t.Name, Partitions: t.Partitions, ReplicationFactor: t.ReplicationFactor}
			for _, c := range t.Configs {
				ct.Configs = append(ct.Configs, KeyValue{c.Key, c.Value})
			}
			todo = append(todo, ct)
		}
	}
	if len(todo) == 0 {
		return
	}
	groupID := g.ID
	names := make([]string, len(todo))
	for i, t := range todo {
		names[i] = t.Name
	}
	c.creator.CreateTopics(todo, func(failed map[string]error) {
		c.metadata.RequestRefresh(names)
		c.run(groupID, func(s *shard) {
			if s.group == nil {
				return
			}
			mem := &s.group.mem
			now := c.clock.Now()
			hb := c.groupConfig(groupID).HeartbeatInterval
			for _, n := range names {
				delete(mem.creatingTopics, n)
				if err := failed[n]; err != nil {
					if mem.topicCreationErrors == nil {
						mem.topicCreationErrors = map[string]topicCreationError{}
					}
					mem.topicCreationErrors[n] = topicCreationError{msg: err.Error(), until: now.Add(2 * hb)}
				}
			}
		})
	})
}

// configurationDetail is the status detail of a topology that is not ready,
// with the topic creation errors of the last two heartbeat intervals.
func (ch *change) configurationDetail(c *configuredTopology) string {
	detail := c.Err.Message
	if c.status() != StatusMissingInternalTopics {
		return detail
	}
	var failed []string
	for name, e := range ch.g.mem.topicCreationErrors {
		if ch.now.After(e.until) {
			delete(ch.g.mem.topicCreationErrors, name)
			continue
		}
		failed = append(failed, fmt.Sprintf("%s (%s)", name, e.msg))
	}
	if len(failed) > 0 {
		sort.Strings(failed)
		detail += "; Creation failed: " + strings.Join(failed, ", ")
	}
	return detail
}

// assignmentIntervalRunning reports whether the last target assignment is
// younger than streams.assignment.interval.ms.
func (ch *change) assignmentIntervalRunning() bool {
	iv := ch.cfg.AssignmentInterval
	if iv <= 0 || ch.g.AssignmentTimestamp == 0 {
		return false
	}
	return ch.now.Before(time.UnixMilli(ch.g.AssignmentTimestamp).Add(iv))
}

// scheduleAssignmentInterval computes the delayed target assignment when the
// interval ends, so members waiting get it on their next heartbeat.
func (ch *change) scheduleAssignmentInterval() {
	if ch.hasTimer(assignmentIntervalTimerKey) {
		return
	}
	d := time.UnixMilli(ch.g.AssignmentTimestamp).Add(ch.cfg.AssignmentInterval).Sub(ch.now)
	ch.schedule(assignmentIntervalTimerKey, d, func(f *change) {
		f.maybeComputeTargetAssignment()
	})
}

// maybeComputeTargetAssignment is the timers' work: compute the target if
// the group has members and its assignment is behind.
func (ch *change) maybeComputeTargetAssignment() {
	g := ch.g
	if len(g.Members) == 0 || g.AssignmentEpoch >= g.GroupEpoch || g.Topology == nil {
		return
	}
	if ch.hasTimer(initialDelayTimerKey) {
		return
	}
	if ch.assignmentIntervalRunning() {
		ch.scheduleAssignmentInterval()
		return
	}
	if _, _, err := ch.configureTopology(g.Topology); err != nil {
		return
	}
	_ = ch.computeTargetAssignment() // on failure the next heartbeat retries and reports it
}

// fenceMember removes a member (leave -1, session or rebalance timeout):
// tombstones for its assignment and metadata, and a group epoch bump. The
// new target is computed by the next heartbeat.
func (ch *change) fenceMember(m *Member) {
	g := ch.g
	ch.emit(Record{Type: RecordCurrentMemberAssignment, MemberID: m.ID})
	ch.emit(Record{Type: RecordTargetAssignmentMember, MemberID: m.ID})
	ch.emit(Record{Type: RecordMemberMetadata, MemberID: m.ID})
	epoch := g.GroupEpoch + 1
	ch.emit(Record{Type: RecordGroupMetadata, Value: &GroupMetadataValue{
		Epoch:                  epoch,
		MetadataHash:           g.MetadataHash,
		ValidatedTopologyEpoch: g.ValidatedTopologyEpoch,
		LastAssignmentConfigs:  g.LastAssignmentConfigs,
	}})
	if len(g.Members) == 0 {
		// An empty group has nothing to assign: its assignment is current,
		// and the next join must not wait for the assignment interval.
		ch.emit(Record{Type: RecordTargetAssignmentMetadata, Value: &TargetAssignmentMetadataValue{AssignmentEpoch: epoch}})
		g.mem.shutdownRequester = ""
		ch.cancel(initialDelayTimerKey)
		ch.cancel(assignmentIntervalTimerKey)
	}
	ch.cancel(sessionTimerKey(m.ID))
	ch.cancel(rebalanceTimerKey(m.ID))
}

// leave handles member epochs -1 (leave) and -2 (static member leaving for
// now, to come back with the same instance id).
func (ch *change) leave(req *kmsg.StreamsGroupHeartbeatRequest, resp *kmsg.StreamsGroupHeartbeatResponse) error {
	g := ch.g
	if g == nil {
		return errorf(kerr.GroupIDNotFound, "Streams group %s not found.", req.Group)
	}
	var m *Member
	if req.InstanceID == nil {
		m = g.Members[req.MemberID]
		if m == nil {
			return errorf(kerr.UnknownMemberID, "Member %s is not a member of group %s.", req.MemberID, g.ID)
		}
	} else {
		ownerID, ok := g.staticMembers[*req.InstanceID]
		if !ok {
			return errorf(kerr.UnknownMemberID, "Instance id %s is unknown.", *req.InstanceID)
		}
		if ownerID != req.MemberID {
			return errorf(kerr.FencedInstanceID, "Static member %s with instance id %s was fenced by member %s.", req.MemberID, *req.InstanceID, ownerID)
		}
		m = g.Members[ownerID]
	}
	if req.MemberEpoch == leaveGroupMemberEpoch {
		ch.fenceMember(m)
	} else {
		// Keep the member and its tasks until it returns or its session
		// expires; what it was revoking is released now.
		cur := *m.current()
		cur.PreviousMemberEpoch = cur.MemberEpoch
		cur.MemberEpoch = leaveGroupStaticMemberEpoch
		cur.PendingRevocation = TaskSets{}
		cur.ActiveEpochs = restrictEpochs(cur.ActiveEpochs, cur.Assigned.Active, true, 0)
		ch.emit(Record{Type: RecordCurrentMemberAssignment, MemberID: m.ID, Value: &cur})
		ch.cancel(rebalanceTimerKey(m.ID))
	}
	// Kafka answers a leave with the member id and epoch only.
	resp.MemberID = req.MemberID
	resp.MemberEpoch = req.MemberEpoch
	resp.Status = []kmsg.StreamsGroupHeartbeatResponseStatus{}
	return nil
}

// topologyFromRequest converts the request's topology, keeping its order.
func topologyFromRequest(t *kmsg.StreamsGroupHeartbeatRequestTopology) topology.Topology {
	out := topology.Topology{Epoch: t.Epoch, Subtopologies: make([]topology.Subtopology, 0, len(t.Subtopologies))}
	info := func(in []kmsg.TopicInfo) []topology.TopicInfo {
		if len(in) == 0 {
			return nil
		}
		res := make([]topology.TopicInfo, 0, len(in))
		for _, ti := range in {
			var cfgs []topology.Config
			for _, c := range ti.Configs {
				cfgs = append(cfgs, topology.Config{Key: c.Key, Value: c.Value})
			}
			res = append(res, topology.TopicInfo{Name: ti.Topic, Partitions: ti.NumPartitions, ReplicationFactor: ti.ReplicationFactor, Configs: cfgs})
		}
		return res
	}
	for _, s := range t.Subtopologies {
		st := topology.Subtopology{
			ID:                      s.SubtopologyID,
			SourceTopics:            slices.Clone(s.SourceTopics),
			SourceTopicRegex:        slices.Clone(s.SourceTopicRegex),
			RepartitionSinkTopics:   slices.Clone(s.RepartitionSinkTopics),
			RepartitionSourceTopics: info(s.RepartitionSourceTopics),
			StateChangelogTopics:    info(s.StateChangelogTopics),
		}
		for _, cg := range s.CopartitionGroups {
			st.CopartitionGroups = append(st.CopartitionGroups, topology.CopartitionGroup{
				SourceTopics:            slices.Clone(cg.SourceTopics),
				RepartitionSourceTopics: slices.Clone(cg.RepartitionSourceTopics),
			})
		}
		out.Subtopologies = append(out.Subtopologies, st)
	}
	return out
}

// topologyEqual compares two topologies field by field, order-sensitive as
// Kafka's comparison is (the Java client sorts what it sends).
func topologyEqual(a, b topology.Topology) bool {
	if a.Epoch != b.Epoch || len(a.Subtopologies) != len(b.Subtopologies) {
		return false
	}
	for i := range a.Subtopologies {
		x, y := a.Subtopologies[i], b.Subtopologies[i]
		if x.ID != y.ID || !slices.Equal(x.SourceTopics, y.SourceTopics) || !slices.Equal(x.SourceTopicRegex, y.SourceTopicRegex) ||
			!slices.Equal(x.RepartitionSinkTopics, y.RepartitionSinkTopics) ||
			!topicInfosEqual(x.RepartitionSourceTopics, y.RepartitionSourceTopics) ||
			!topicInfosEqual(x.StateChangelogTopics, y.StateChangelogTopics) ||
			len(x.CopartitionGroups) != len(y.CopartitionGroups) {
			return false
		}
		for j := range x.CopartitionGroups {
			if !slices.Equal(x.CopartitionGroups[j].SourceTopics, y.CopartitionGroups[j].SourceTopics) ||
				!slices.Equal(x.CopartitionGroups[j].RepartitionSourceTopics, y.CopartitionGroups[j].RepartitionSourceTopics) {
				return false
			}
		}
	}
	return true
}

func topicInfosEqual(a, b []topology.TopicInfo) bool {
	return slices.EqualFunc(a, b, func(x, y topology.TopicInfo) bool {
		return x.Name == y.Name && x.Partitions == y.Partitions && x.ReplicationFactor == y.ReplicationFactor && slices.Equal(x.Configs, y.Configs)
	})
}
