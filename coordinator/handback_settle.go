package coordinator

import (
	"fmt"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// A hand-back is over for the app when the group runs again on the broker
// as a classic group (issue #39), not at its state flip (the streams group
// deleted here, a millisecond): its members rejoin upstream, the broker
// forms a new generation, and each member runs its tasks once its SyncGroup
// is answered. The capture's timeline says a step settled when no member
// is mid-rebalance (a JoinGroup not yet followed by a SyncGroup answered
// without error) and every task has one owner; for a handed-back group
// that is: every member of the broker's newest generation has its
// assignment. The forwarded classic answers show it (the observer,
// migration_observed.go): a handed-back group keeps a handBackSettle from
// the hand-back's end until then, and the coordinator tells
// EventClassicGroupSynced, which the status page, the settle metric and the
// capture (its timeline settles the hand-back at it) hear. Groups not
// handed back keep none, and their answers cost one nil check.

// EventClassicGroupSynced: streams.EventClassicGroupSynced.
const EventClassicGroupSynced = streams.EventClassicGroupSynced

// handBackSettleMax is how long a handed-back group waits for its classic
// generation to settle before the wait is given up (its members went
// elsewhere or away): longer than Kafka Streams' default rebalance timeout
// (max.poll.interval.ms, 300 s) with room for the rejoin after it.
const handBackSettleMax = 10 * time.Minute

// handBackSettle is a handed-back group's wait for its classic generation:
// the newest generation the broker answered a JoinGroup of, its members
// (the leader's JoinGroup answer lists them all; without it, the members
// whose JoinGroup answer was seen here) and which of them have their
// assignment.
type handBackSettle struct {
	generation int32
	// synced is each member of the generation, true once its SyncGroup
	// was answered without error; listed: the leader's list made it.
	synced map[string]bool
	listed bool
	// giveUp ends the wait after handBackSettleMax.
	giveUp Timer
}

// note applies what a forwarded classic answer of member showed: a
// JoinGroup answered for generation (joined; members: the generation's
// members, from its leader's answer) or a SyncGroup answered without error
// (synced). It reports whether every member of the generation now has its
// assignment.
func (h *handBackSettle) note(member string, generation int32, joined, synced bool, members []string) bool {
	if !joined && !synced {
		return false
	}
	if generation > h.generation || h.synced == nil {
		// A new generation: the broker formed it without what the older
		// one synced.
		h.generation, h.synced, h.listed = generation, map[string]bool{}, false
	}
	if generation < h.generation {
		return false
	}
	if joined {
		if len(members) > 0 {
			listed := make(map[string]bool, len(members))
			for _, m := range members {
				listed[m] = h.synced[m]
			}
			h.synced, h.listed = listed, true
		}
		if _, ok := h.synced[member]; !ok && !h.listed {
			h.synced[member] = false
		}
		return false
	}
	h.synced[member] = true
	for _, done := range h.synced {
		if !done {
			return false
		}
	}
	return true
}

// stop ends the wait's timer.
func (h *handBackSettle) stop() {
	if h != nil && h.giveUp != nil {
		h.giveUp.Stop()
	}
}

// syncedEvent is the event of a settled hand-back.
func (h *handBackSettle) syncedEvent(group string, at time.Time) GroupEvent {
	return GroupEvent{Kind: EventClassicGroupSynced, Group: group, At: at,
		Fields: map[string]any{"generation": h.generation, "members": len(h.synced)},
		Message: fmt.Sprintf("[GroupId %s] Every member of the classic generation %d on the broker has its assignment (%d members): the hand-back settled.",
			group, h.generation, len(h.synced))}
}
