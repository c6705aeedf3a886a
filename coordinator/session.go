package coordinator

import (
	"fmt"
	"github.com/streamshift/streamshift/coordinator/streams"
	"time"
)

// The session and rebalance timers of members (Kafka's session-timeout and
// rebalance-timeout), and the classic members' sync and join timeouts: a
// member whose timer fires is fenced (fence.go). The timers themselves are
// timers.go's.

// sessionTimeout is the member's own session timeout for a classic member
// (from its JoinGroup), the group's otherwise.
func (ch *change) sessionTimeout(memberID string) time.Duration {
	if m := ch.g.Members[memberID]; m != nil && m.IsClassic() {
		return time.Duration(m.Meta.Classic.SessionTimeoutMs) * time.Millisecond
	}
	return ch.cfg.SessionTimeout
}

// scheduleSession (re)arms a member's session timer: when it expires the
// member is fenced as if it had left.
func (ch *change) scheduleSession(memberID string) {
	ch.schedule(sessionTimerKey(memberID), ch.sessionTimeout(memberID), func(f *change) {
		if m := f.g.Members[memberID]; m != nil {
			f.fenceMember(m, sessionExpiredReason)
		}
	})
}

// sessionExpiredReason is Kafka's reason of a session timeout's fencing.
const sessionExpiredReason = "the member session expired"

// scheduleRebalance arms a member's rebalance timer for the epoch it is
// revoking at: if it still has not revoked when the timer fires, it is fenced.
func (ch *change) scheduleRebalance(memberID string, epoch int32, timeout time.Duration) {
	ch.schedule(rebalanceTimerKey(memberID), timeout, func(f *change) {
		switch m := f.g.Members[memberID]; {
		case m == nil:
			f.logDebug(memberID).Msgf("[GroupId %s] Could not fence %s because the member does not exist.", f.g.ID, memberID)
		case m.CurrentAssignment().State == streams.MemberUnrevokedTasks && m.MemberEpoch() == epoch:
			f.fenceMember(m, fmt.Sprintf("it failed to transition from epoch %d within %dms", epoch, timeout.Milliseconds()))
		default:
			f.logDebug(memberID).Msgf("[GroupId %s] Ignoring rebalance timeout for %s because the member is not in epoch %d anymore.", f.g.ID, memberID, epoch)
		}
	})
}

// onLoaded arms the timers of a group just replayed from the log: a session
// timer for every member and a rebalance timer for every member revoking.
func (c *Coordinator) onLoaded(s *shard) {
	ch := c.newChange(s)
	defer c.carryOut(s, ch)
	for id, m := range s.group.Members {
		ch.scheduleSession(id)
		if cur := m.CurrentAssignment(); cur.State == streams.MemberUnrevokedTasks {
			ch.scheduleRebalance(id, cur.MemberEpoch, rebalanceTimeout(m))
		}
	}
}

func rebalanceTimeout(m *streams.Member) time.Duration {
	if m.Meta == nil {
		return 0
	}
	return time.Duration(m.Meta.RebalanceTimeoutMs) * time.Millisecond
}

// scheduleCarriedSession arms the session timer of a member carried over by
// a takeover with what is left of its upstream session; it fences as
// scheduleSession's does, and the member's next request re-arms it in full.
func (ch *change) scheduleCarriedSession(memberID string, left time.Duration) {
	ch.schedule(sessionTimerKey(memberID), left, func(f *change) {
		if m := f.g.Members[memberID]; m != nil {
			f.fenceMember(m, sessionExpiredReason)
		}
	})
}

// Why a classic member's timers fence it, in Kafka's words.
const (
	classicSyncTimeoutReason = "the member failed to sync within timeout"
	classicJoinTimeoutReason = "the classic member failed to join within the rebalance timeout"
)

// scheduleClassicTimeout fences the member when the timer fires at the same
// member epoch and still holds (nil: always); a member that moved on in the
// meantime is left alone. reason is the fencing's, for the log.
func (ch *change) scheduleClassicTimeout(key timerKey, m *streams.Member, reason string, still func(*streams.Group, *streams.Member) bool) {
	id, epoch := m.ID, m.MemberEpoch()
	ch.schedule(key, rebalanceTimeout(m), func(f *change) {
		cur := f.g.Members[id]
		if cur != nil && cur.MemberEpoch() == epoch && (still == nil || still(f.g, cur)) {
			f.fenceClassic(cur, reason)
		}
	})
}
