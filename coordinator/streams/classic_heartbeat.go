package streams

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ClassicHeartbeatRequest is a classic member's Heartbeat.
type ClassicHeartbeatRequest struct {
	GroupID    string
	MemberID   string
	InstanceID string
	Generation int32
}

// ClassicMustRejoin: would a JoinGroup of the member change its assignment?
func ClassicMustRejoin(g *Group, m *Member) bool {
	cur := m.CurrentAssignment()
	switch {
	case cur.MemberEpoch < g.GroupEpoch, cur.State == MemberUnrevokedTasks:
		return true
	case cur.State == MemberUnreleasedTasks:
		owned := cur.Assigned
		next, err := Reconcile(cur, m.ProcessID(), g.AssignmentEpoch, g.Target[m.ID], &owned, g)
		return err == nil && !next.Assigned.Equal(cur.Assigned)
	}
	return false
}

// ClassicLeaveMember is one member of a LeaveGroup (v3+ batches them).
type ClassicLeaveMember struct {
	MemberID   string
	InstanceID string
}

func ValidateClassicOffsetCommit(g *Group, req OffsetCommitRequest) OffsetCommitResult {
	if g == nil {
		return OffsetCommitResult{Err: kerr.GroupIDNotFound}
	}
	if m := g.Members[req.MemberID]; m == nil || !m.IsClassic() {
		if req.MemberID == "" && req.MemberEpoch < 0 && (len(g.Members) == 0 || req.Transactional) {
			return OffsetCommitResult{Partitions: make([]error, len(req.Partitions))}
		}
		if m != nil {
			return ValidateOffsetCommit(g, req)
		}
	}
	m, err := ClassicMember(g, g.ID, req.MemberID, req.InstanceID)
	if err != nil {
		return OffsetCommitResult{Err: err}
	}
	if req.MemberEpoch != m.MemberEpoch() {
		return OffsetCommitResult{Err: fmt.Errorf("generation %d of member %s is not its member epoch %d: %w", req.MemberEpoch, m.ID, m.MemberEpoch(), kerr.IllegalGeneration)}
	}
	return OffsetCommitResult{Partitions: make([]error, len(req.Partitions))}
}
