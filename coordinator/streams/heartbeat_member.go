package streams

import (
	"slices"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ClientInfo is what the proxy knows of the connection a request came on.
type ClientInfo struct {
	ClientID   string // the request header's client id
	ClientHost string // the client's address, as Kafka reports it ("/10.0.0.1")
	// ConnID names the client connection (unique for the proxy's life);
	// Closed is closed when that connection closes. Closed nil: unknown
	// (a test, a request the coordinator did not get from a client), which
	// counts as open (member_conn.go).
	ConnID uint64
	Closed <-chan struct{}
	// ClosedAt is when Closed closed (zero while open); nil: unknown,
	// and the close counts from when it is seen.
	ClosedAt func() time.Time
}

func (ch *Change) checkGroupSize(memberID string) error {
	max := ch.MaxGroupSize
	if max > 0 && len(ch.Group.Members) >= max && ch.Group.Members[memberID] == nil {
		return Errorf(kerr.GroupMaxSizeReached, "The streams group has reached its maximum capacity of %d members.", max)
	}
	return nil
}

// checkMemberEpoch is Kafka's throwIfStreamsGroupMemberEpochIsInvalid. An
// older epoch is accepted only when it is the previous epoch and the member
// owns no more than it was given: the response that moved it on was lost.
func checkMemberEpoch(m *Member, req *kmsg.StreamsGroupHeartbeatRequest) error {
	cur := m.CurrentAssignment()
	switch {
	case req.MemberEpoch > cur.MemberEpoch:
		return Errorf(kerr.FencedMemberEpoch, "The streams group member has a greater member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", req.MemberEpoch, cur.MemberEpoch)
	case req.MemberEpoch < cur.MemberEpoch:
		if req.MemberEpoch == cur.PreviousMemberEpoch && req.ActiveTasks != nil && req.StandbyTasks != nil && req.WarmupTasks != nil &&
			tasksSubset(TasksFromKmsg(req.ActiveTasks), cur.Assigned.Active) &&
			tasksSubset(TasksFromKmsg(req.StandbyTasks), cur.Assigned.Standby) &&
			tasksSubset(TasksFromKmsg(req.WarmupTasks), cur.Assigned.Warmup) {
			return nil
		}
		return Errorf(kerr.FencedMemberEpoch, "The streams group member has a smaller member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", req.MemberEpoch, cur.MemberEpoch)
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
			tags = append(tags, KeyValue{Key: t.Key, Value: t.Value})
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
	a, b := old.userEndpoint(), v.userEndpoint()
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// sameEpochs compares the epochs of the assigned active tasks (pending ones
// are not sent to the member).
func sameEpochs(a, b *CurrentMemberAssignmentValue) bool {
	same := true
	ForEachTask(b.Assigned.Active, func(t TaskID) {
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
func (ch *Change) replaceStaticMember(old *Member, memberID string) *Member {
	g := ch.Group
	target := g.Target[old.ID]
	cur := *old.CurrentAssignment()
	meta := old.Meta
	if old.ID != memberID {
		protocol := "streams"
		if ch.Classic != nil {
			protocol = "classic"
		}
		ch.logInfo(memberID).Str("instance", old.InstanceID()).Str("replaced_member", old.ID).Str("reason", "static member replaced").
			Msgf("[GroupId %s][MemberId %s] Static member with instance id %s re-joins the streams group using the %s protocol. Created a new member %s to replace the existing member %s.",
				g.ID, memberID, old.InstanceID(), protocol, memberID, old.ID)
		ch.tombstoneMember(old.ID)
		ch.cancel(sessionTimerKey(old.ID))
		ch.cancel(RebalanceTimerKey(old.ID))
		ch.emit(newMemberRecord(g.ID, memberID, meta))
		ch.emit(newTargetAssignmentRecord(g.ID, memberID, target))
	}
	cur.MemberEpoch = 0
	cur.PreviousMemberEpoch = 0
	cur.State = MemberStable
	cur.PendingRevocation = TaskSets{}
	cur.ActiveEpochs = restrictEpochs(cur.ActiveEpochs, cur.Assigned.Active, false, 0)
	ch.emit(newCurrentAssignmentRecord(g.ID, memberID, &cur))
	return g.Members[memberID]
}

// validateOwnedTasks rejects owned tasks outside the configured topology.
func validateOwnedTasks(req *kmsg.StreamsGroupHeartbeatRequest, c *configuredTopology) error {
	for _, l := range [3][]kmsg.TaskIDs{req.ActiveTasks, req.StandbyTasks, req.WarmupTasks} {
		for _, t := range l {
			s := c.SubtopologyByID(t.SubtopologyID)
			if s == nil {
				return Errorf(kerr.InvalidRequest, "Subtopology %s does not exist in the topology.", t.SubtopologyID)
			}
			for _, p := range t.Partitions {
				if p < 0 || p >= s.NumTasks {
					return Errorf(kerr.InvalidRequest, "Task %d for subtopology %s is invalid. Number of tasks for this subtopology: %d", p, t.SubtopologyID, s.NumTasks)
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

// classicMetadata stamps the classic metadata of the JoinGroup being served
// on the member's new metadata. A StreamsGroupHeartbeat naming a classic
// member is refused: a member never changes protocol under the same id.
func (ch *Change) classicMetadata(m *Member, meta *MemberMetadataValue) (*MemberMetadataValue, error) {
	if ch.Classic == nil {
		if m != nil && m.IsClassic() {
			return nil, Errorf(kerr.UnknownMemberID, "Member %s of group %s uses the classic protocol.", m.ID, ch.Group.ID)
		}
		if meta != nil && meta.Classic != nil {
			// A streams member that replaced a classic one (replace.go)
			// starts from its metadata, not from its protocol.
			v := *meta
			v.Classic = nil
			return &v, nil
		}
		return meta, nil
	}
	v := *meta // record values are shared with the log: copy
	c := *ch.Classic
	v.Classic = &c
	// A classic member runs the group's topology; it never sends one.
	v.TopologyEpoch = ch.Group.TopologyEpoch()
	return &v, nil
}
