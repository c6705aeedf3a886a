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
	Client     ClientInfo // the connection it came on (member_conn.go)
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
	m, err := classicMember(g, g.ID, req.MemberID, req.InstanceID)
	if err != nil {
		return OffsetCommitResult{Err: err}
	}
	if req.MemberEpoch != m.MemberEpoch() {
		return OffsetCommitResult{Err: fmt.Errorf("generation %d of member %s is not its member epoch %d: %w", req.MemberEpoch, m.ID, m.MemberEpoch(), kerr.IllegalGeneration)}
	}
	return OffsetCommitResult{Partitions: make([]error, len(req.Partitions))}
}

// ClassicHeartbeat is the operation of a classic member's Heartbeat
// (Coordinator.ClassicHeartbeat).
func (ch *Change) ClassicHeartbeat(req ClassicHeartbeatRequest) error {
	g := ch.Group
	m, err := classicMember(g, req.GroupID, req.MemberID, req.InstanceID)
	if err != nil {
		return err
	}
	ch.noteClassicHeartbeat(m.ID, req.Client)
	if req.Generation != m.MemberEpoch() {
		return fmt.Errorf("generation %d of member %s is not its member epoch %d: %w", req.Generation, m.ID, m.MemberEpoch(), kerr.IllegalGeneration)
	}
	ch.scheduleSession(m.ID)
	if !classicMustRejoin(g, m) && !ch.handBackPull() {
		return nil
	}
	if !ch.hasTimer(classicJoinTimerKey(m.ID)) {
		// Fenced only if it still has a reason to rejoin by then.
		ch.scheduleClassicTimeout(classicJoinTimerKey(m.ID), m, ClassicJoinTimeoutReason, func(g *Group, m *Member) bool {
			return classicMustRejoin(g, m) || g.Mem.HandBack != nil
		})
	}
	return fmt.Errorf("member %s of group %s must rejoin (member epoch %d, group epoch %d, %s): %w", m.ID, g.ID, m.MemberEpoch(), g.GroupEpoch, m.CurrentAssignment().State, kerr.RebalanceInProgress)
}

// ClassicLeaveGroup is the operation of a classic LeaveGroup
// (Coordinator.ClassicLeaveGroup).
func (ch *Change) ClassicLeaveGroup(groupID string, members []ClassicLeaveMember) ([]error, error) {
	g := ch.Group
	if g == nil || len(g.Members) == 0 {
		return nil, ErrClassicNotServed
	}
	errs := make([]error, len(members))
	for i, lm := range members {
		id := lm.MemberID
		if id == "" && lm.InstanceID != "" {
			// LeaveGroup v3+ may name a static member by instance only.
			id = g.StaticMembers[lm.InstanceID]
		}
		m, err := classicMember(g, groupID, id, lm.InstanceID)
		if err != nil {
			errs[i] = err
			continue
		}
		ch.logLeft(m, "has left group through explicit `LeaveGroup` request")
		ch.removeClassic(m, BumpMemberLeft)
	}
	ch.Commit()
	return errs, nil
}
