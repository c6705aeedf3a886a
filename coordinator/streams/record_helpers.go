package streams

import "github.com/streamshift/streamshift/coordinator/streams/topology"

// The records of a streams group are built here and nowhere else, as Kafka
// builds them in StreamsCoordinatorRecordHelpers: one constructor per record
// type, and one per tombstone.

// NewOwnershipRecord is RecordOwnership (streamshift's own).
func NewOwnershipRecord(groupID string, v *OwnershipValue) Record {
	return Record{Type: RecordOwnership, GroupID: groupID, Value: v}
}

func NewOwnershipTombstone(groupID string) Record {
	return Record{Type: RecordOwnership, GroupID: groupID}
}

// NewGroupEpochRecord is StreamsGroupMetadata (Kafka's
// newStreamsGroupEpochRecord).
func NewGroupEpochRecord(groupID string, v *GroupMetadataValue) Record {
	return Record{Type: RecordGroupMetadata, GroupID: groupID, Value: v}
}

// NewGroupEpochTombstone ends a group's deletion: replaying it removes the
// group.
func NewGroupEpochTombstone(groupID string) Record {
	return Record{Type: RecordGroupMetadata, GroupID: groupID}
}

// NewMemberRecord is StreamsGroupMemberMetadata.
func NewMemberRecord(groupID, memberID string, v *MemberMetadataValue) Record {
	return Record{Type: RecordMemberMetadata, GroupID: groupID, MemberID: memberID, Value: v}
}

func NewMemberTombstone(groupID, memberID string) Record {
	return Record{Type: RecordMemberMetadata, GroupID: groupID, MemberID: memberID}
}

// NewTargetAssignmentRecord is StreamsGroupTargetAssignmentMember.
func NewTargetAssignmentRecord(groupID, memberID string, tasks TaskSets) Record {
	return Record{Type: RecordTargetAssignmentMember, GroupID: groupID, MemberID: memberID, Value: &TargetAssignmentMemberValue{Tasks: tasks}}
}

func NewTargetAssignmentTombstone(groupID, memberID string) Record {
	return Record{Type: RecordTargetAssignmentMember, GroupID: groupID, MemberID: memberID}
}

// NewTargetAssignmentEpochRecord is StreamsGroupTargetAssignmentMetadata;
// timestampMs is when the assignment was computed (unix ms; 0 lets the next
// one run at once).
func NewTargetAssignmentEpochRecord(groupID string, epoch int32, timestampMs int64) Record {
	return Record{Type: RecordTargetAssignmentMetadata, GroupID: groupID, Value: &TargetAssignmentMetadataValue{AssignmentEpoch: epoch, AssignmentTimestamp: timestampMs}}
}

func NewTargetAssignmentEpochTombstone(groupID string) Record {
	return Record{Type: RecordTargetAssignmentMetadata, GroupID: groupID}
}

// NewCurrentAssignmentRecord is StreamsGroupCurrentMemberAssignment.
func NewCurrentAssignmentRecord(groupID, memberID string, v *CurrentMemberAssignmentValue) Record {
	return Record{Type: RecordCurrentMemberAssignment, GroupID: groupID, MemberID: memberID, Value: v}
}

func NewCurrentAssignmentTombstone(groupID, memberID string) Record {
	return Record{Type: RecordCurrentMemberAssignment, GroupID: groupID, MemberID: memberID}
}

// NewTopologyRecord is StreamsGroupTopology.
func NewTopologyRecord(groupID string, t topology.Topology) Record {
	return Record{Type: RecordTopology, GroupID: groupID, Value: &TopologyValue{Topology: t}}
}

func NewTopologyTombstone(groupID string) Record {
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
