package streams

import (
	"cmp"
	"fmt"
)

// Groups is the coordinator's state: what replaying the log gives.
type Groups map[string]*Group

// Replay applies records in order to the groups and returns them. It is the
// only way group state changes: the heartbeat emits records and replays them.
func Replay(groups Groups, records []Record) (Groups, error) {
	if groups == nil {
		groups = Groups{}
	}
	for _, r := range records {
		if err := groups.replay(r); err != nil {
			return groups, err
		}
	}
	return groups, nil
}

func (gs Groups) replay(r Record) error {
	if r.Type == RecordGroupConfig {
		// Configs outlive the group (as in Kafka) and are the coordinator's,
		// not the group's: Coordinator.Load applies them.
		return nil
	}
	g := gs[r.GroupID]
	if g == nil {
		if r.Tombstone() {
			return nil // deleting what does not exist
		}
		g = newGroup(r.GroupID)
		gs[r.GroupID] = g
	}
	if r.Type == RecordGroupMetadata && r.Tombstone() {
		// The group metadata tombstone ends a deletion: the group is gone
		// with whatever it still held.
		delete(gs, r.GroupID)
		return nil
	}
	return g.Replay(r)
}

func (g *Group) Replay(r Record) error {
	switch r.Type {
	case RecordOwnership:
		v, err := valueOf[OwnershipValue](r) // nil for a tombstone
		if err != nil {
			return err
		}
		g.Ownership = v

	case RecordGroupMetadata:
		v, err := valueOf[GroupMetadataValue](r)
		if err != nil || v == nil {
			// Its tombstone removes the whole group (Groups.replay).
			return cmp.Or(err, fmt.Errorf("replay %s: tombstone of group %s", r.Type, r.GroupID))
		}
		g.GroupEpoch = v.Epoch
		g.MetadataHash = v.MetadataHash
		g.ValidatedTopologyEpoch = v.ValidatedTopologyEpoch
		g.LastAssignmentConfigs = v.LastAssignmentConfigs

	case RecordTopology:
		if r.Tombstone() {
			g.Topology = nil
			return nil
		}
		v, err := valueOf[TopologyValue](r)
		if err != nil {
			return err
		}
		t := v.Topology
		g.Topology = &t

	case RecordTargetAssignmentMetadata:
		if r.Tombstone() {
			return nil
		}
		v, err := valueOf[TargetAssignmentMetadataValue](r)
		if err != nil {
			return err
		}
		g.AssignmentEpoch = v.AssignmentEpoch
		g.AssignmentTimestamp = v.AssignmentTimestamp

	case RecordTargetAssignmentMember:
		if r.Tombstone() {
			g.countWarmupTargets(g.Target[r.MemberID].Warmup, -1)
			delete(g.Target, r.MemberID)
			return nil
		}
		v, err := valueOf[TargetAssignmentMemberValue](r)
		if err != nil {
			return err
		}
		g.countWarmupTargets(g.Target[r.MemberID].Warmup, -1)
		g.Target[r.MemberID] = v.Tasks
		g.countWarmupTargets(v.Tasks.Warmup, 1)

	case RecordMemberMetadata:
		m := g.Members[r.MemberID]
		if r.Tombstone() {
			if m == nil {
				return nil
			}
			g.addOwnership(m.ProcessID(), m.Current, -1)
			if id := m.InstanceID(); id != "" && g.StaticMembers[id] == m.ID {
				delete(g.StaticMembers, id)
			}
			delete(g.Members, r.MemberID)
			if g.Mem.conns[r.MemberID].closed != nil {
				g.Mem.connLeft = true // its watch may end (conn_watch.go)
			}
			delete(g.Mem.conns, r.MemberID)
			return nil
		}
		v, err := valueOf[MemberMetadataValue](r)
		if err != nil {
			return err
		}
		m = g.memberOrNew(m, r.MemberID)
		if old := m.ProcessID(); old != v.ProcessID && m.Current != nil {
			g.addOwnership(old, m.Current, -1)
			g.addOwnership(v.ProcessID, m.Current, +1)
		}
		if id := m.InstanceID(); id != "" && id != v.InstanceID && g.StaticMembers[id] == m.ID {
			delete(g.StaticMembers, id)
		}
		if v.InstanceID != "" {
			g.StaticMembers[v.InstanceID] = m.ID
		}
		m.Meta = v

	case RecordCurrentMemberAssignment:
		m := g.Members[r.MemberID]
		if r.Tombstone() {
			if m != nil {
				g.addOwnership(m.ProcessID(), m.Current, -1)
				m.Current = nil
			}
			return nil
		}
		v, err := valueOf[CurrentMemberAssignmentValue](r)
		if err != nil {
			return err
		}
		m = g.memberOrNew(m, r.MemberID)
		g.addOwnership(m.ProcessID(), m.Current, -1)
		m.Current = v
		g.addOwnership(m.ProcessID(), v, +1)

	default:
		return fmt.Errorf("replay: unknown record type %d", r.Type)
	}
	return nil
}

// valueOf is a record's value as the type its record type stores; nil for a
// tombstone.
func valueOf[V any](r Record) (*V, error) {
	if r.Tombstone() {
		return nil, nil
	}
	v, ok := r.Value.(*V)
	if !ok {
		return nil, fmt.Errorf("replay %s: value %T", r.Type, r.Value)
	}
	return v, nil
}

// memberOrNew is m, or a new member id of the group when m is nil: a
// member's records may replay in any order.
func (g *Group) memberOrNew(m *Member, id string) *Member {
	if m == nil {
		m = &Member{ID: id}
		g.Members[id] = m
	}
	return m
}
