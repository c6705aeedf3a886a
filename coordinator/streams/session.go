package streams

import (
	"fmt"
	"time"
)

// The session and rebalance timers of members (Kafka's session-timeout and
// rebalance-timeout), and the classic members' sync and join timeouts: a
// member whose timer fires is fenced (fence.go). An operation arms them on
// its change (change.go); the runtime runs them.

// sessionTimeout is the member's own session timeout for a classic member
// (from its JoinGroup), the group's otherwise.
func (ch *Change) sessionTimeout(memberID string) time.Duration {
	if m := ch.Group.Members[memberID]; m != nil && m.IsClassic() {
		return time.Duration(m.Meta.Classic.SessionTimeoutMs) * time.Millisecond
	}
	return ch.Config.SessionTimeout
}

// scheduleSession (re)arms a member's session timer: when it expires the
// member is fenced as if it had left.
func (ch *Change) scheduleSession(memberID string) {
	ch.noteSessionExpiry(memberID, ch.sessionTimeout(memberID))
	ch.schedule(sessionTimerKey(memberID), ch.sessionTimeout(memberID), func(f *Change) {
		if m := f.Group.Members[memberID]; m != nil {
			f.fenceMember(m, SessionExpiredReason)
		}
	})
}

// SessionExpiredReason is Kafka's reason of a session timeout's fencing.
const SessionExpiredReason = "the member session expired"

// scheduleRebalance arms a member's rebalance timer for the epoch it is
// revoking at: if it still has not revoked when the timer fires, it is fenced.
func (ch *Change) scheduleRebalance(memberID string, epoch int32, timeout time.Duration) {
	ch.schedule(RebalanceTimerKey(memberID), timeout, func(f *Change) {
		switch m := f.Group.Members[memberID]; {
		case m == nil:
			f.logDebug(memberID).Msgf("[GroupId %s] Could not fence %s because the member does not exist.", f.Group.ID, memberID)
		case m.CurrentAssignment().State == MemberUnrevokedTasks && m.MemberEpoch() == epoch:
			f.fenceMember(m, fmt.Sprintf("it failed to transition from epoch %d within %dms", epoch, timeout.Milliseconds()))
		default:
			f.logDebug(memberID).Msgf("[GroupId %s] Ignoring rebalance timeout for %s because the member is not in epoch %d anymore.", f.Group.ID, memberID, epoch)
		}
	})
}

func RebalanceTimeout(m *Member) time.Duration {
	if m.Meta == nil {
		return 0
	}
	return time.Duration(m.Meta.RebalanceTimeoutMs) * time.Millisecond
}

// scheduleCarriedSession arms the session timer of a member carried over by
// a takeover with what is left of its upstream session; it fences as
// scheduleSession's does, and the member's next request re-arms it in full.
func (ch *Change) scheduleCarriedSession(memberID string, left time.Duration) {
	ch.noteSessionExpiry(memberID, left)
	ch.schedule(sessionTimerKey(memberID), left, func(f *Change) {
		if m := f.Group.Members[memberID]; m != nil {
			f.fenceMember(m, SessionExpiredReason)
		}
	})
}

// Why a classic member's timers fence it, in Kafka's words.
const (
	ClassicSyncTimeoutReason = "the member failed to sync within timeout"
	ClassicJoinTimeoutReason = "the classic member failed to join within the rebalance timeout"
)

// scheduleClassicTimeout fences the member when the timer fires at the same
// member epoch and still holds (nil: always); a member that moved on in the
// meantime is left alone. reason is the fencing's, for the log.
func (ch *Change) scheduleClassicTimeout(key TimerKey, m *Member, reason string, still func(*Group, *Member) bool) {
	id, epoch := m.ID, m.MemberEpoch()
	ch.schedule(key, RebalanceTimeout(m), func(f *Change) {
		cur := f.Group.Members[id]
		if cur != nil && cur.MemberEpoch() == epoch && (still == nil || still(f.Group, cur)) {
			f.fenceClassic(cur, reason)
		}
	})
}

// OnLoaded is the operation run on a group just replayed from the log
// (Kafka's CoordinatorShard.onLoaded): a session timer for every member
// and a rebalance timer for every member revoking. It writes nothing.
func (ch *Change) OnLoaded() {
	for id, m := range ch.Group.Members {
		ch.scheduleSession(id)
		if cur := m.CurrentAssignment(); cur.State == MemberUnrevokedTasks {
			ch.scheduleRebalance(id, cur.MemberEpoch, RebalanceTimeout(m))
		}
	}
}

// RenewSession re-arms a streams-protocol member's session timer in full
// from now, as its heartbeat would: a takeover answers the first member's
// join only once the group is taken over, and the time streamshift held that
// heartbeat is not the member's to lose. False if the member is not here
// (fenced meanwhile) or is a classic member (its own heartbeats run its
// session).
func (ch *Change) RenewSession(memberID string) bool {
	m := ch.Group.Members[memberID]
	if m == nil || m.IsClassic() {
		return false
	}
	ch.scheduleSession(memberID)
	return true
}
