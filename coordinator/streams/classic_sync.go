package streams

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/streamshift/streamshift/classicstreams"
)

// ClassicSyncRequest is a classic member's SyncGroup. Its assignments (a
// leader's) are ignored: the streams group assigns.
type ClassicSyncRequest struct {
	GroupID      string
	MemberID     string
	InstanceID   string
	Generation   int32
	ProtocolType *string // nil when the request does not carry it (v0-v4)
	ProtocolName *string
	Client       ClientInfo // the connection it came on (member_conn.go)
}

// ClassicSyncResult is the SyncGroup answer: the member's assignment bytes
// (ConsumerProtocolAssignment with AssignmentInfo user data), or an error.
// Active and Standby are what the bytes hold, in streams terms, for logs and
// tests (warm-ups are in Standby).
type ClassicSyncResult struct {
	Err        error
	Assignment []byte
	Active     Tasks
	Standby    Tasks
	Info       *classicstreams.AssignmentInfo
	// CreatableTopics: as ClassicJoinResult's.
	CreatableTopics []CreatableTopic
}

// ClassicProtocolType and ClassicProtocolName are what a classic Kafka
// Streams member joins with.
const (
	ClassicProtocolType = "consumer"
	ClassicProtocolName = "stream"
)

// configuredOrNil returns the group's configured topology, computing it if
// the metadata moved; nil if that fails.
func (ch *Change) configuredOrNil() *configuredTopology {
	if ch.Group.Topology == nil {
		return nil
	}
	c, _, err := ch.configureTopology(ch.Group.Topology)
	if err != nil {
		return nil
	}
	return c
}

// classicMember finds the classic member a classic request names, with the
// classic coordinator's errors.
func classicMember(g *Group, groupID, memberID, instanceID string) (*Member, error) {
	if g == nil || len(g.Members) == 0 {
		return nil, ErrClassicNotServed
	}
	if instanceID != "" {
		owner, ok := g.StaticMembers[instanceID]
		if !ok {
			return nil, fmt.Errorf("instance id %s is unknown in group %s: %w", instanceID, groupID, kerr.UnknownMemberID)
		}
		if owner != memberID {
			return nil, fmt.Errorf("static member %s with instance id %s was fenced by member %s: %w", memberID, instanceID, owner, kerr.FencedInstanceID)
		}
	}
	m := g.Members[memberID]
	if m == nil {
		return nil, fmt.Errorf("member %s is not a member of group %s: %w", memberID, groupID, kerr.UnknownMemberID)
	}
	if !m.IsClassic() {
		return nil, fmt.Errorf("member %s of group %s uses the streams protocol: %w", memberID, groupID, kerr.InconsistentGroupProtocol)
	}
	return m, nil
}

// classicAssignment writes the member's current assignment for SyncGroup:
// its assigned partitions, and an AssignmentInfo at its own version with the
// aligned active task list, standbys (warm-ups included), the IQ host maps of
// the whole group, and errCode 4 while an application shutdown is requested.
// Tasks pending revocation are left out: their absence is what makes a
// classic member revoke them.
func classicAssignment(g *Group, m *Member, topo *configuredTopology) (ClassicSyncResult, error) {
	cm := m.Meta.Classic
	cur := m.CurrentAssignment()
	in := classicstreams.SyncAssignment{
		ConsumerProtocolVersion: cm.ConsumerProtocolVersion,
		SubscriptionVersion:     cm.SubscriptionVersion,
		LatestSupportedVersion:  cm.LatestSupportedVersion,
		NextRebalanceMs:         classicstreams.NoFollowupRebalance,
	}
	res := ClassicSyncResult{}
	tt := classicTaskTopology(topo)
	if tt == nil || classicstreams.ReplyVersion(cm.SubscriptionVersion, cm.LatestSupportedVersion).Future {
		// Nothing can be assigned without a ready topology; a member
		// from the future gets nothing and re-subscribes at once.
		tt, _ = classicstreams.NewTaskTopology(nil)
	} else {
		res.Active = cur.Assigned.Active
		res.Standby = TasksUnion(cur.Assigned.Standby, cur.Assigned.Warmup)
		var err error
		if in.Active, err = classicstreams.TasksFromStreams(res.Active); err != nil {
			return res, err
		}
		if in.Standby, err = classicstreams.TasksFromStreams(res.Standby); err != nil {
			return res, err
		}
		in.PartitionsByHost, in.StandbyPartitionsByHost = classicHostMaps(g, topo)
	}
	if g.Mem.shutdownRequester != "" && cm.SubscriptionVersion >= 4 {
		in.ErrCode = classicstreams.AssignorErrorShutdownRequested
		res.Active, res.Standby = nil, nil
	}
	b, _, info, err := classicstreams.BuildSyncAssignment(in, tt, configuredCounts(topo))
	if err != nil {
		return res, err
	}
	res.Assignment, res.Info = b, info
	return res, nil
}

// configuredCounts gives the partition counts of the configured topology's
// input topics.
func configuredCounts(topo *configuredTopology) classicstreams.PartitionCounts {
	counts := map[string]int32{}
	if topo.IsReady() {
		for _, s := range topo.ConfiguredSubtopologies {
			for t, n := range s.SourceTopicPartitions {
				counts[t] = n
			}
		}
	}
	return func(topic string) (int32, bool) {
		n, ok := counts[topic]
		return n, ok
	}
}

// classicHostMaps is the group's PartitionsByUserEndpoint as AssignmentInfo
// host maps.
func classicHostMaps(g *Group, topo *configuredTopology) (active, standby []classicstreams.HostPartitions) {
	var eps []classicstreams.EndpointPartitions
	for _, e := range partitionsByUserEndpoint(g, topo, "") {
		ep := classicstreams.EndpointPartitions{Endpoint: classicstreams.HostInfo{Host: e.UserEndpoint.Host, Port: int32(e.UserEndpoint.Port)}}
		for _, tp := range e.ActivePartitions {
			for _, p := range tp.Partitions {
				ep.Active = append(ep.Active, classicstreams.TopicPartition{Topic: tp.Topic, Partition: p})
			}
		}
		for _, tp := range e.StandbyPartitions {
			for _, p := range tp.Partitions {
				ep.Standby = append(ep.Standby, classicstreams.TopicPartition{Topic: tp.Topic, Partition: p})
			}
		}
		eps = append(eps, ep)
	}
	sort.SliceStable(eps, func(i, j int) bool {
		a, b := eps[i].Endpoint, eps[j].Endpoint
		return a.Host+":"+strconv.Itoa(int(a.Port)) < b.Host+":"+strconv.Itoa(int(b.Port))
	})
	return classicstreams.HostMaps(eps, nil)
}

func optString(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}

// ClassicSyncGroup is the operation of a classic member's SyncGroup
// (Coordinator.ClassicSyncGroup): its current assignment, as AssignmentInfo.
func (ch *Change) ClassicSyncGroup(req ClassicSyncRequest) ClassicSyncResult {
	g := ch.Group
	m, err := classicMember(g, req.GroupID, req.MemberID, req.InstanceID)
	if err != nil {
		return ClassicSyncResult{Err: err}
	}
	ch.noteConn(m.ID, req.Client)
	if req.Generation != m.MemberEpoch() {
		return ClassicSyncResult{Err: fmt.Errorf("generation %d of member %s is not its member epoch %d: %w", req.Generation, m.ID, m.MemberEpoch(), kerr.IllegalGeneration)}
	}
	if (req.ProtocolType != nil && *req.ProtocolType != ClassicProtocolType) || (req.ProtocolName != nil && *req.ProtocolName != ClassicProtocolName) {
		return ClassicSyncResult{Err: fmt.Errorf("member %s syncs with protocol %v/%v, the group runs %s/%s: %w", m.ID, optString(req.ProtocolType), optString(req.ProtocolName), ClassicProtocolType, ClassicProtocolName, kerr.InconsistentGroupProtocol)}
	}
	cur := m.CurrentAssignment()
	if g.AssignmentEpoch > cur.MemberEpoch && cur.State != MemberUnrevokedTasks {
		// A newer target exists that the member's next JoinGroup
		// reconciles towards: send it back at once.
		return ClassicSyncResult{Err: fmt.Errorf("group %s moved to assignment epoch %d; member %s at %d must rejoin: %w", g.ID, g.AssignmentEpoch, m.ID, cur.MemberEpoch, kerr.RebalanceInProgress)}
	}
	ch.cancel(classicSyncTimerKey(m.ID))
	res, err := classicAssignment(g, m, ch.configuredOrNil())
	if err != nil {
		return ClassicSyncResult{Err: fmt.Errorf("sync %s member %s: %v: %w", g.ID, m.ID, err, kerr.UnknownServerError)}
	}
	ch.scheduleSession(m.ID)
	return res
}
