package coordinator

import (
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
		if g.State() != GroupEmpty {
			done(kerr.NonEmptyGroup)
			return
		}
		ch := c.newChange(s)
		// Kafka's order: current assignments, target members, target
		// metadata, members, group metadata, topology.
		for id := range g.Members {
			ch.emit(Record{Type: RecordCurrentMemberAssignment, MemberID: id})
		}
		for id := range g.Target {
			ch.emit(Record{Type: RecordTargetAssignmentMember, MemberID: id})
		}
		ch.emit(Record{Type: RecordTargetAssignmentMetadata})
		for id := range g.Members {
			ch.emit(Record{Type: RecordMemberMetadata, MemberID: id})
		}
		// Replaying the group tombstone removes the group; the topology
		// tombstone still goes to the log so compaction forgets it too.
		ch.records = append(ch.records,
			Record{Type: RecordGroupMetadata, GroupID: g.ID},
			Record{Type: RecordTopology, GroupID: g.ID})
		if g.Ownership != nil {
			ch.records = append(ch.records, Record{Type: RecordOwnership, GroupID: g.ID})
		}
		mem := g.mem
		if err := ch.commit(); err != nil {
			done(kerr.CoordinatorNotAvailable)
			return
		}
		mem.stopTimers()
		s.group = nil
		done(nil)
	}, func(e *coordError) { done(e) })
}
