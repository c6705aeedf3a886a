package streams

import "fmt"

// The keys of a group's timers. An operation arms and cancels them through
// its change (change.go); the runtime in package coordinator runs them.

// TimerKey names a timer of a group, as Kafka's session-timeout-<g>-<m>,
// rebalance-timeout-<g>-<m> and initial-rebalance-timeout-<g>.
type TimerKey struct {
	kind   timerKind
	Member string
}

type timerKind uint8

const (
	sessionTimer timerKind = iota
	rebalanceTimer
	initialDelayTimer
	assignmentIntervalTimer
	groupExpirationTimer
)

// Name is the timer's name in Kafka's form ("session-timeout-<g>-<m>"), for
// the log.
func (k TimerKey) Name(groupID string) string {
	var kind string
	switch k.kind {
	case sessionTimer:
		kind = "session-timeout"
	case rebalanceTimer:
		kind = "rebalance-timeout"
	case initialDelayTimer:
		kind = "initial-rebalance-timeout"
	case assignmentIntervalTimer:
		kind = "assignment-interval"
	case groupExpirationTimer:
		kind = "group-expiration"
	case classicSyncTimer:
		kind = "sync"
	case classicJoinTimer:
		kind = "join"
	case disconnectExpiryTimer:
		kind = "disconnect-expiry"
	case classicJoinHoldTimer:
		kind = "join-hold"
	default:
		kind = fmt.Sprintf("timer-%d", k.kind)
	}
	if k.Member == "" {
		return kind + "-" + groupID
	}
	return kind + "-" + groupID + "-" + k.Member
}

func sessionTimerKey(memberID string) TimerKey   { return TimerKey{sessionTimer, memberID} }
func RebalanceTimerKey(memberID string) TimerKey { return TimerKey{rebalanceTimer, memberID} }

var (
	initialDelayTimerKey       = TimerKey{kind: initialDelayTimer}
	assignmentIntervalTimerKey = TimerKey{kind: assignmentIntervalTimer}
)

// Timers of classic members, next to the session and rebalance timers:
// Kafka's sync timeout (a member that joined must SyncGroup within its
// rebalance timeout) and join timeout (a member told to rejoin must JoinGroup
// within its rebalance timeout).
const (
	classicSyncTimer timerKind = 32 + iota
	classicJoinTimer
)

// disconnectExpiryTimer fences a dynamic member whose connection closed
// (disconnect_expiry.go), streamshift's own.
const disconnectExpiryTimer timerKind = 48

// classicJoinHoldTimer ends a held classic JoinGroup's wait
// (classic_join.go), streamshift's own.
const classicJoinHoldTimer timerKind = 49

// ClassicJoinHoldTimerKey is the timer that answers member memberID's held
// JoinGroup when its hold runs out.
func ClassicJoinHoldTimerKey(memberID string) TimerKey {
	return TimerKey{classicJoinHoldTimer, memberID}
}

func disconnectExpiryTimerKey(memberID string) TimerKey {
	return TimerKey{disconnectExpiryTimer, memberID}
}

func classicSyncTimerKey(memberID string) TimerKey { return TimerKey{classicSyncTimer, memberID} }

func classicJoinTimerKey(memberID string) TimerKey { return TimerKey{classicJoinTimer, memberID} }
