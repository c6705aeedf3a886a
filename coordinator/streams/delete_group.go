package streams

import (
	"sort"
)

// TombstoneGroup writes the records that delete the group, in Kafka's order
// (StreamsGroup.createGroupTombstoneRecords): current assignments, target
// members, target metadata, members, group metadata, topology; then the
// ownership with ownership set.
func (ch *Change) TombstoneGroup(ownership bool) {
	g := ch.G
	ids := SortedMemberIDs(g)
	for _, id := range ids {
		ch.Emit(NewCurrentAssignmentTombstone(g.ID, id))
	}
	for id := range g.Target {
		ch.Emit(NewTargetAssignmentTombstone(g.ID, id))
	}
	ch.Emit(NewTargetAssignmentEpochTombstone(g.ID))
	for _, id := range ids {
		ch.Emit(NewMemberTombstone(g.ID, id))
	}
	// Replaying the group tombstone removes the group; the topology and
	// ownership tombstones still go to the log so compaction forgets them
	// too.
	ch.Records = append(ch.Records, NewGroupEpochTombstone(g.ID), NewTopologyTombstone(g.ID))
	if ownership {
		ch.Records = append(ch.Records, NewOwnershipTombstone(g.ID))
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
