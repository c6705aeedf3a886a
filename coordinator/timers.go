package coordinator

import (
	"fmt"
	"time"

	"github.com/streamshift/streamshift/coordinator/topology"
)

// groupMemory is the part of a group's state that Kafka keeps in memory only:
// it is not in the records and starts afresh after a failover.
type groupMemory struct {
	configured          *configuredTopology
	configuredVersion   uint64             // metadata image version it was computed from
	configuredHash      uint64             // metadata hash of the topology topics in that image
	configuredFor       *topology.Topology // the topology it was computed for
	endpointEpoch       int32
	shutdownRequester   string
	creatingTopics      map[string]bool
	topicCreationErrors map[string]topicCreationError
	timers              map[timerKey]*groupTimer
	handBack            *handBack // classic_handback.go; nil when none runs
}

type topicCreationError struct {
	msg   string
	until time.Time
}

// groupTimer is a pending timer of a group. Its callback acts only if the
// timer is still the group's timer of that key and its deadline has passed:
// a timer that was re-armed or cancelled after it fired is a no-op.
type groupTimer struct {
	t        Timer
	deadline time.Time
	fire     func(ch *change)
}

func (m *groupMemory) stopTimers() {
	for k, t := range m.timers {
		t.t.Stop()
		delete(m.timers, k)
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
	g := ch.g
	if g.mem.timers == nil {
		g.mem.timers = map[timerKey]*groupTimer{}
	}
	deadline := ch.now.Add(d)
	if gt := g.mem.timers[key]; gt != nil {
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
			if s.group == nil || s.group.mem.timers[key] != gt {
				return
			}
			fch := c.newChange(s)
			if fch.now.Before(gt.deadline) {
				return // re-armed after it fired
			}
			delete(s.group.mem.timers, key)
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
	g.mem.timers[key] = gt
}

func (ch *change) cancel(key timerKey) {
	if t := ch.g.mem.timers[key]; t != nil {
		t.t.Stop()
		delete(ch.g.mem.timers, key)
	}
}

func (ch *change) hasTimer(key timerKey) bool {
	_, ok := ch.g.mem.timers[key]
	return ok
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
		case m.current().State == MemberUnrevokedTasks && m.MemberEpoch() == epoch:
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
	for id, m := range s.group.Members {
		ch.scheduleSession(id)
		if cur := m.current(); cur.State == MemberUnrevokedTasks {
			ch.scheduleRebalance(id, cur.MemberEpoch, rebalanceTimeout(m))
		}
	}
}

func rebalanceTimeout(m *Member) time.Duration {
	if m.Meta == nil {
		return 0
	}
	return time.Duration(m.Meta.RebalanceTimeoutMs) * time.Millisecond
}
