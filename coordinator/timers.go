package coordinator

import (
	"fmt"
	"time"
)

// groupTimer is a pending timer of a group. Its callback acts only if the
// timer is still the group's timer of that key and its deadline has passed:
// a timer that was re-armed or cancelled after it fired is a no-op.
type groupTimer struct {
	t        Timer
	deadline time.Time
	fire     func(ch *change)
}

// stopTimers stops the group's timers: the group is gone (deleted,
// unloaded, back to a log without it) or the coordinator closed.
func (s *shard) stopTimers() {
	for k, t := range s.timers {
		t.t.Stop()
		delete(s.timers, k)
	}
}

// timerKey names a timer of a group, as Kafka's session-timeout-<g>-<m>,
// rebalance-timeout-<g>-<m> and initial-rebalance-timeout-<g>.
type timerKey struct {
	kind   timerKind
	member string
}

type timerKind uint8

const (
	sessionTimer timerKind = iota
	rebalanceTimer
	initialDelayTimer
	assignmentIntervalTimer
)

// name is the timer's name in Kafka's form ("session-timeout-<g>-<m>"), for
// the log.
func (k timerKey) name(groupID string) string {
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
	case classicSyncTimer:
		kind = "sync"
	case classicJoinTimer:
		kind = "join"
	default:
		kind = fmt.Sprintf("timer-%d", k.kind)
	}
	if k.member == "" {
		return kind + "-" + groupID
	}
	return kind + "-" + groupID + "-" + k.member
}

func sessionTimerKey(memberID string) timerKey   { return timerKey{sessionTimer, memberID} }
func rebalanceTimerKey(memberID string) timerKey { return timerKey{rebalanceTimer, memberID} }

var (
	initialDelayTimerKey       = timerKey{kind: initialDelayTimer}
	assignmentIntervalTimerKey = timerKey{kind: assignmentIntervalTimer}
)

// schedule arms (or re-arms) a timer of the group; fire runs on the group's
// queue. Re-arming a pending timer resets it in place.
func (ch *change) schedule(key timerKey, d time.Duration, fire func(ch *change)) {
	g, s := ch.g, ch.s
	if s.timers == nil {
		s.timers = map[timerKey]*groupTimer{}
	}
	deadline := ch.now.Add(d)
	if gt := s.timers[key]; gt != nil {
		gt.deadline = deadline
		gt.fire = fire
		gt.t.Reset(d)
		return
	}
	c := ch.c
	groupID := g.ID
	gt := &groupTimer{deadline: deadline, fire: fire}
	gt.t = c.clock.AfterFunc(d, func() {
		c.run(groupID, func(s *shard) {
			if s.group == nil || s.timers[key] != gt {
				return
			}
			fch := c.newChange(s)
			if fch.now.Before(gt.deadline) {
				return // re-armed after it fired
			}
			delete(s.timers, key)
			gt.fire(fch)
			// On failure the group is back to its log and the timer's
			// work is lost, as in a failover; Kafka's timer logs and
			// ignores a failed write the same way.
			if err := fch.commit(); err != nil {
				name := key.name(groupID)
				c.logger.Error().Err(err).Str("group", groupID).Str("member", key.member).Str("timer", name).
					Msgf("[GroupId %s] The write event for the timer %s failed due to %v. Ignoring it.", groupID, name, err)
			}
		}, nil) // a closed or unloaded group's timer has nobody to answer
	})
	s.timers[key] = gt
}

func (ch *change) cancel(key timerKey) {
	if t := ch.s.timers[key]; t != nil {
		t.t.Stop()
		delete(ch.s.timers, key)
	}
}

func (ch *change) hasTimer(key timerKey) bool {
	_, ok := ch.s.timers[key]
	return ok
}

// Timers of classic members, next to the session and rebalance timers:
// Kafka's sync timeout (a member that joined must SyncGroup within its
// rebalance timeout) and join timeout (a member told to rejoin must JoinGroup
// within its rebalance timeout).
const (
	classicSyncTimer timerKind = 32 + iota
	classicJoinTimer
)

func classicSyncTimerKey(memberID string) timerKey { return timerKey{classicSyncTimer, memberID} }

func classicJoinTimerKey(memberID string) timerKey { return timerKey{classicJoinTimer, memberID} }
