package streams

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TombstoneGroup writes the records that delete the group, in Kafka's order
// (StreamsGroup.createGroupTombstoneRecords): current assignments, target
// members, target metadata, members, group metadata, topology; then the
// ownership with ownership set.
func (ch *Change) TombstoneGroup(ownership bool) {
	g := ch.Group
	ids := SortedMemberIDs(g)
	for _, id := range ids {
		ch.emit(tombstone(RecordCurrentMemberAssignment, g.ID, id))
	}
	for id := range g.Target {
		ch.emit(tombstone(RecordTargetAssignmentMember, g.ID, id))
	}
	ch.emit(tombstone(RecordTargetAssignmentMetadata, g.ID, ""))
	for _, id := range ids {
		ch.emit(tombstone(RecordMemberMetadata, g.ID, id))
	}
	// Replaying the group tombstone removes the group; the topology and
	// ownership tombstones still go to the log so compaction forgets them
	// too.
	ch.Records = append(ch.Records, tombstone(RecordGroupMetadata, g.ID, ""), tombstone(RecordTopology, g.ID, ""))
	if ownership {
		ch.Records = append(ch.Records, tombstone(RecordOwnership, g.ID, ""))
	}
}

func SortedMemberIDs(g *Group) []string {
	ids := make([]string, 0, len(g.Members))
	for id := range g.Members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// DeleteGroup is the operation of Coordinator.DeleteGroup: the tombstones of
// an Empty group, or GROUP_ID_NOT_FOUND / NON_EMPTY_GROUP.
func (ch *Change) DeleteGroup() error {
	g := ch.Group
	if g == nil {
		return kerr.GroupIDNotFound
	}
	if g.State() != GroupEmpty {
		return kerr.NonEmptyGroup
	}
	ch.TombstoneGroup(g.Ownership != nil)
	ch.Commit()
	return nil
}
