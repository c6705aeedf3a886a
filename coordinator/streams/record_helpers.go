package streams

import "github.com/streamshift/streamshift/coordinator/streams/topology"

// The records of a streams group are built here and nowhere else, as Kafka
// builds them in StreamsCoordinatorRecordHelpers: one constructor per record
// type, and one per tombstone.

// newOwnershipRecord is RecordOwnership (streamshift's own).
func newOwnershipRecord(groupID string, v *OwnershipValue) Record {
	return Record{Type: RecordOwnership, GroupID: groupID, Value: v}
}

func newOwnershipTombstone(groupID string) Record {
	return Record{Type: RecordOwnership, GroupID: groupID}
}

// newGroupEpochRecord is StreamsGroupMetadata (Kafka's
// newStreamsGroupEpochRecord).
func newGroupEpochRecord(groupID string, v *GroupMetadataValue) Record {
	return Record{Type: RecordGroupMetadata, GroupID: groupID, Value: v}
}

// newGroupEpochTombstone ends a group's deletion: replaying it removes the
// group.
func newGroupEpochTombstone(groupID string) Record {
	return Record{Type: RecordGroupMetadata, GroupID: groupID}
}

// newMemberRecord is StreamsGroupMemberMetadata.
func newMemberRecord(groupID, memberID string, v *MemberMetadataValue) Record {
	return Record{Type: RecordMemberMetadata, GroupID: groupID, MemberID: memberID, Value: v}
}

func newMemberTombstone(groupID, memberID string) Record {
	return Record{Type: RecordMemberMetadata, GroupID: groupID, MemberID: memberID}
}

// newTargetAssignmentRecord is StreamsGroupTargetAssignmentMember.
func newTargetAssignmentRecord(groupID, memberID string, tasks TaskSets) Record {
	return Record{Type: RecordTargetAssignmentMember, GroupID: groupID, MemberID: memberID, Value: &TargetAssignmentMemberValue{Tasks: tasks}}
}

func newTargetAssignmentTombstone(groupID, memberID string) Record {
	return Record{Type: RecordTargetAssignmentMember, GroupID: groupID, MemberID: memberID}
}

// newTargetAssignmentEpochRecord is StreamsGroupTargetAssignmentMetadata;
// timestampMs is when the assignment was computed (unix ms; 0 lets the next
// one run at once).
func newTargetAssignmentEpochRecord(groupID string, epoch int32, timestampMs int64) Record {
	return Record{Type: RecordTargetAssignmentMetadata, GroupID: groupID, Value: &TargetAssignmentMetadataValue{AssignmentEpoch: epoch, AssignmentTimestamp: timestampMs}}
}

func newTargetAssignmentEpochTombstone(groupID string) Record {
	return Record{Type: RecordTargetAssignmentMetadata, GroupID: groupID}
}

// newCurrentAssignmentRecord is StreamsGroupCurrentMemberAssignment.
func newCurrentAssignmentRecord(groupID, memberID string, v *CurrentMemberAssignmentValue) Record {
	return Record{Type: RecordCurrentMemberAssignment, GroupID: groupID, MemberID: memberID, Value: v}
}

func newCurrentAssignmentTombstone(groupID, memberID string) Record {
	return Record{Type: RecordCurrentMemberAssignment, GroupID: groupID, MemberID: memberID}
}

// newTopologyRecord is StreamsGroupTopology.
func newTopologyRecord(groupID string, t topology.Topology) Record {
	return Record{Type: RecordTopology, GroupID: groupID, Value: &TopologyValue{Topology: t}}
}

func newTopologyTombstone(groupID string) Record {
	return Record{Type: RecordTopology, GroupID: groupID}
}

// NewGroupConfigRecord is RecordGroupConfig (streamshift's own); a nil v is
// its tombstone (the group has no overrides left).
func NewGroupConfigRecord(groupID string, v *GroupConfigValue) Record {
	r := Record{Type: RecordGroupConfig, GroupID: groupID}
	if v != nil {
		r.Value = v
	}
	return r
}
