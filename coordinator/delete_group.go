package coordinator

import (
	"sort"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/twmb/franz-go/pkg/kerr"
)

// DeleteGroup deletes a streams group for DeleteGroups: only an Empty group
// can go (NON_EMPTY_GROUP otherwise, GROUP_ID_NOT_FOUND if there is none).
// done gets nil or a *kerr.Error once the tombstones are in the log. Its
// committed offsets stay on the upstream; deleting them is the caller's part.
func (c *Coordinator) DeleteGroup(groupID string, done func(error)) {
	c.run(groupID, func(s *shard) {
		g := s.group
		if g == nil {
			done(kerr.GroupIDNotFound)
			return
		}
		if g.State() != streams.GroupEmpty {
			done(kerr.NonEmptyGroup)
			return
		}
		ch := c.newChange(s)
		ch.tombstoneGroup(g.Ownership != nil)
		if err := c.commit(s, ch); err != nil {
			done(kerr.CoordinatorNotAvailable)
			return
		}
		s.stopTimers()
		s.group = nil
		done(nil)
	}, func(e *streams.CoordError) { done(e) })
}

// tombstoneGroup writes the records that delete the group, in Kafka's order
// (StreamsGroup.createGroupTombstoneRecords): current assignments, target
// members, target metadata, members, group metadata, topology; then the
// ownership with ownership set.
func (ch *change) tombstoneGroup(ownership bool) {
	g := ch.g
	ids := sortedMemberIDs(g)
	for _, id := range ids {
		ch.emit(streams.NewCurrentAssignmentTombstone(g.ID, id))
	}
	for id := range g.Target {
		ch.emit(streams.NewTargetAssignmentTombstone(g.ID, id))
	}
	ch.emit(streams.NewTargetAssignmentEpochTombstone(g.ID))
	for _, id := range ids {
		ch.emit(streams.NewMemberTombstone(g.ID, id))
	}
	// Replaying the group tombstone removes the group; the topology and
	// ownership tombstones still go to the log so compaction forgets them
	// too.
	ch.records = append(ch.records, streams.NewGroupEpochTombstone(g.ID), streams.NewTopologyTombstone(g.ID))
	if ownership {
		ch.records = append(ch.records, streams.NewOwnershipTombstone(g.ID))
	}
}

func sortedMemberIDs(g *streams.Group) []string {
	ids := make([]string, 0, len(g.Members))
	for id := range g.Members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
