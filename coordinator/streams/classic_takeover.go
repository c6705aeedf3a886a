package streams

import (
	"fmt"
	"strconv"
	"time"

	"github.com/streamshift/streamshift/classicstreams"
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

type importedMember struct {
	Id          string
	Meta        *MemberMetadataValue
	Tasks       TaskSets
	SessionLeft time.Duration
}

// LiveClassicMembers drops the members whose session ran out before now: the
// upstream would have fenced them already (they are fenced there with the
// others all the same).
func LiveClassicMembers(state ClassicGroupState, now time.Time) ClassicGroupState {
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

// ImportClassicMembers reads each classic member's metadata and held tasks
// (active tasks from its assigned partitions, standbys from its
// AssignmentInfo), all checked against the configured topology. A task
// claimed by two members as active is an error: the classic group itself
// would be broken.
func ImportClassicMembers(state ClassicGroupState, topo *ConfiguredTopology, topologyEpoch int32, now time.Time) ([]importedMember, error) {
	tt := classicTaskTopology(topo)
	if tt == nil {
		return nil, fmt.Errorf("the topology is not ready, the classic tasks cannot be checked")
	}
	owner := map[TaskID]string{}
	out := make([]importedMember, 0, len(state.Members))
	for _, cm := range state.Members {
		if cm.Subscription == nil || cm.Info == nil {
			return nil, fmt.Errorf("member %s: no subscription", cm.MemberID)
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
		if cm.AssignmentInfo != nil {
			for _, st := range cm.AssignmentInfo.StandbyTasks {
				id, err := checkedTask(st.Task, topo)
				if err != nil {
					return nil, fmt.Errorf("member %s: standby: %w", cm.MemberID, err)
				}
				standby.Add(id.Subtopology, id.Partition)
			}
		}
		out = append(out, importedMember{Id: cm.MemberID, Meta: meta, Tasks: TaskSets{Active: active.Build(), Standby: standby.Build()},
			SessionLeft: classicSessionLeft(cm, now)})
	}
	return out, nil
}

func checkedTask(t classicstreams.TaskID, topo *ConfiguredTopology) (TaskID, error) {
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
