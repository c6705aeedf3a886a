package classicstreams

import (
	"fmt"
	"math"
)

// NoFollowupRebalance is the AssignmentInfo nextRebalanceMs for "none".
const NoFollowupRebalance int64 = math.MaxInt64

// SyncAssignment is what the streams group gives one classic member, in
// streams-protocol terms, plus what the member told in its JoinGroup.
type SyncAssignment struct {
	// ConsumerProtocolVersion is the version of the member's
	// ConsumerProtocolSubscription; the assignment echoes it, capped at 3.
	ConsumerProtocolVersion int16
	// SubscriptionVersion and LatestSupportedVersion come from the member's
	// SubscriptionInfo.
	SubscriptionVersion    int32
	LatestSupportedVersion int32
	// Active and Standby tasks (warm-up tasks go with the standbys, as the
	// 4.x client merges them too).
	Active  []TaskID
	Standby []TaskID
	// PartitionsByHost and StandbyPartitionsByHost come from HostMaps.
	PartitionsByHost        []HostPartitions
	StandbyPartitionsByHost []HostPartitions
	// NextRebalanceMs: NoFollowupRebalance, 0 for now, or an epoch-ms time.
	NextRebalanceMs int64
	// ErrCode, if not AssignorErrorNone, makes an error assignment with
	// nothing assigned (needs SubscriptionVersion >= 4).
	ErrCode int32
}

// BuildSyncAssignment makes the SyncGroup member assignment bytes for a
// classic Streams member: the assigned partitions, and an AssignmentInfo at
// the member's own version (ReplyVersion) whose active task list is aligned
// with those partitions (AlignActiveTasks). A member from the future gets
// FutureMemberAssignment and no partitions. It returns the decoded forms too,
// for logging and tests.
func BuildSyncAssignment(in SyncAssignment, topo *TaskTopology, counts PartitionCounts) ([]byte, *ConsumerAssignment, *AssignmentInfo, error) {
	reply := ReplyVersion(in.SubscriptionVersion, in.LatestSupportedVersion)
	ca := &ConsumerAssignment{Version: min(max(in.ConsumerProtocolVersion, 0), MaxConsumerProtocolVersion)}
	var info AssignmentInfo
	switch {
	case reply.Future:
		info = FutureMemberAssignment()
	case in.ErrCode != AssignorErrorNone:
		var err error
		if info, err = ErrorAssignment(reply, in.ErrCode); err != nil {
			return nil, nil, nil, err
		}
	default:
		parts, active, err := AlignActiveTasks(in.Active, topo, counts)
		if err != nil {
			return nil, nil, nil, err
		}
		standby, err := StandbyAssignment(in.Standby, topo, counts)
		if err != nil {
			return nil, nil, nil, err
		}
		ca.AssignedPartitions = parts
		info = AssignmentInfo{
			Version:                  reply.Version,
			CommonlySupportedVersion: reply.CommonlySupportedVersion,
			ActiveTasks:              active,
			StandbyTasks:             standby,
			PartitionsByHost:         in.PartitionsByHost,
			StandbyPartitionsByHost:  in.StandbyPartitionsByHost,
			NextRebalanceMs:          in.NextRebalanceMs,
		}
	}
	userData, err := info.Encode()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("assignment for a v%d member: %w", in.SubscriptionVersion, err)
	}
	ca.UserData = userData
	return ca.Encode(), ca, &info, nil
}
