package streams

import "github.com/streamshift/streamshift/coordinator/streams/topology"

// The records of a streams group are built here and nowhere else, as Kafka
// builds them in StreamsCoordinatorRecordHelpers: one constructor per record
// type, and tombstone for them all.

// tombstone deletes the record of type t keyed by the group (and, for
// member records, the member); a StreamsGroupMetadata tombstone ends a
// group's deletion: replaying it removes the group.
func tombstone(t RecordType, groupID, memberID string) Record {
	return Record{Type: t, GroupID: groupID, MemberID: memberID}
}

// newOwnershipRecord is RecordOwnership (streamshift's own).
func newOwnershipRecord(groupID string, v *OwnershipValue) Record {
	return Record{Type: RecordOwnership, GroupID: groupID, Value: v}
}

// newGroupEpochRecord is StreamsGroupMetadata (Kafka's
// newStreamsGroupEpochRecord).
func newGroupEpochRecord(groupID string, v *GroupMetadataValue) Record {
	return Record{Type: RecordGroupMetadata, GroupID: groupID, Value: v}
}

// newMemberRecord is StreamsGroupMemberMetadata.
func newMemberRecord(groupID, memberID string, v *MemberMetadataValue) Record {
	return Record{Type: RecordMemberMetadata, GroupID: groupID, MemberID: memberID, Value: v}
}

// newTargetAssignmentRecord is StreamsGroupTargetAssignmentMember.
func newTargetAssignmentRecord(groupID, memberID string, tasks TaskSets) Record {
	return Record{Type: RecordTargetAssignmentMember, GroupID: groupID, MemberID: memberID, Value: &TargetAssignmentMemberValue{Tasks: tasks}}
}

// newTargetAssignmentEpochRecord is StreamsGroupTargetAssignmentMetadata;
// timestampMs is when the assignment was computed (unix ms; 0 lets the next
// one run at once).
func newTargetAssignmentEpochRecord(groupID string, epoch int32, timestampMs int64) Record {
	return Record{Type: RecordTargetAssignmentMetadata, GroupID: groupID, Value: &TargetAssignmentMetadataValue{AssignmentEpoch: epoch, AssignmentTimestamp: timestampMs}}
}

// newCurrentAssignmentRecord is StreamsGroupCurrentMemberAssignment.
func newCurrentAssignmentRecord(groupID, memberID string, v *CurrentMemberAssignmentValue) Record {
	return Record{Type: RecordCurrentMemberAssignment, GroupID: groupID, MemberID: memberID, Value: v}
}

// newTopologyRecord is StreamsGroupTopology.
func newTopologyRecord(groupID string, t topology.Topology) Record {
	return Record{Type: RecordTopology, GroupID: groupID, Value: &TopologyValue{Topology: t}}
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
