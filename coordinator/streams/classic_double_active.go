package streams

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/streamshift/streamshift/classicstreams"
)

// A classic assignment can give one active task to two members: the
// consumer's sticky assignors had such bugs (KAFKA-7026, KAFKA-12984,
// KAFKA-21674), and a custom or buggy Streams assignor can too. The classic
// coordinator never checks, so the group runs the task twice until its next
// rebalance. KIP-848's online migration met such an assignment with an
// IllegalStateException: UNKNOWN_SERVER_ERROR to the new-protocol member and
// a group that stays classic forever (KAFKA-21684). A streams group tracks
// one active owner per task (Group.ActiveOwners), so the takeover cannot
// carry both either; it keeps the task on one member, takes it from the
// others, and says so. The group's next epoch pulls every classic member
// in (Heartbeat REBALANCE_IN_PROGRESS), and the others' next SyncGroup
// answer no longer holds the task: they revoke it, which ends the double
// run the classic group had.

// doubleActive is one task a classic assignment gave to several members.
type doubleActive struct {
	Task TaskID
	// Kept is the member the takeover leaves it with; Dropped the others.
	Kept    string
	Dropped []string
	// Why names the rule that chose Kept.
	Why string
}

// resolveDoubleActives is state with each active task held by one member:
// of the members whose assignment holds a task, the one that owned it when
// it joined this generation (its subscription's OwnedPartitions: it ran the
// task before, its state is there) keeps it if it is the only such member,
// else the one with the smallest member id (any choice is as good, a fixed
// one is reproducible). The others lose the task's partitions from their
// assignment and from their owned partitions (else they would be held as
// revoking a task another member holds, which the takeover retries forever).
// The caller's state is not changed. Partitions no subtopology reads are
// left for importClassicMembers to refuse.
func resolveDoubleActives(state ClassicGroupState, tt *classicstreams.TaskTopology) (ClassicGroupState, []doubleActive) {
	if tt == nil {
		return state, nil
	}
	holders := map[TaskID][]int{}
	var order []TaskID
	for i, cm := range state.Members {
		if cm.Assignment == nil {
			continue
		}
		seen := map[TaskID]bool{}
		for _, tp := range cm.Assignment.AssignedPartitions {
			id, ok := groupTaskOf(tp, tt)
			if !ok || seen[id] {
				continue
			}
			seen[id] = true
			if len(holders[id]) == 0 {
				order = append(order, id)
			}
			holders[id] = append(holders[id], i)
		}
	}
	var found []doubleActive
	drop := map[int]map[TaskID]bool{}
	for _, id := range order {
		hs := holders[id]
		if len(hs) < 2 {
			continue
		}
		keep, why := keeperOf(state, hs, id, tt)
		d := doubleActive{Task: id, Kept: state.Members[keep].MemberID, Why: why}
		for _, i := range hs {
			if i == keep {
				continue
			}
			d.Dropped = append(d.Dropped, state.Members[i].MemberID)
			if drop[i] == nil {
				drop[i] = map[TaskID]bool{}
			}
			drop[i][id] = true
		}
		found = append(found, d)
	}
	if len(found) == 0 {
		return state, nil
	}
	out := state
	out.Members = slices.Clone(state.Members)
	for i, tasks := range drop {
		m := &out.Members[i]
		keep := func(tp classicstreams.TopicPartition) bool {
			id, ok := groupTaskOf(tp, tt)
			return !ok || !tasks[id]
		}
		a := *m.Assignment
		a.AssignedPartitions = filterPartitions(a.AssignedPartitions, keep)
		m.Assignment = &a
		if m.Subscription != nil {
			s := *m.Subscription
			s.OwnedPartitions = filterPartitions(s.OwnedPartitions, keep)
			m.Subscription = &s
		}
	}
	return out, found
}

// keeperOf picks the member of holders (indexes into state.Members) that
// keeps task id.
func keeperOf(state ClassicGroupState, holders []int, id TaskID, tt *classicstreams.TaskTopology) (int, string) {
	var owners []int
	for _, i := range holders {
		if sub := state.Members[i].Subscription; sub != nil && slices.ContainsFunc(sub.OwnedPartitions, func(tp classicstreams.TopicPartition) bool {
			t, ok := groupTaskOf(tp, tt)
			return ok && t == id
		}) {
			owners = append(owners, i)
		}
	}
	if len(owners) == 1 {
		return owners[0], "it owned the task when it joined this generation"
	}
	best := holders[0]
	for _, i := range holders[1:] {
		if state.Members[i].MemberID < state.Members[best].MemberID {
			best = i
		}
	}
	return best, "the smallest member id"
}

func groupTaskOf(tp classicstreams.TopicPartition, tt *classicstreams.TaskTopology) (TaskID, bool) {
	t, ok := tt.TaskOf(tp)
	if !ok || t.NamedTopology != "" {
		return TaskID{}, false
	}
	return TaskID{Subtopology: strconv.Itoa(int(t.Subtopology)), Partition: t.Partition}, true
}

func filterPartitions(tps []classicstreams.TopicPartition, keep func(classicstreams.TopicPartition) bool) []classicstreams.TopicPartition {
	out := make([]classicstreams.TopicPartition, 0, len(tps))
	for _, tp := range tps {
		if keep(tp) {
			out = append(out, tp)
		}
	}
	return out
}

// logDoubleActives tells what the takeover found and did, one warning per
// task (EventClassicDoubleActive).
func (ch *Change) logDoubleActives(generation int32, found []doubleActive) {
	for _, d := range found {
		ch.logAt(LevelWarn).Str("member", d.Kept).Ev(EventClassicDoubleActive).Str("task", fmt.Sprintf("%s_%d", d.Task.Subtopology, d.Task.Partition)).
			Strs("dropped_from", d.Dropped).Int32("generation", generation).
			Msgf("[GroupId %s] The classic assignment of generation %d gives active task %s_%d to %d members (%s and %v); the takeover keeps it on %s (%s) and takes it from the others, which revoke it when they rejoin.",
				ch.GroupID, generation, d.Task.Subtopology, d.Task.Partition, len(d.Dropped)+1, d.Kept, d.Dropped, d.Kept, d.Why)
	}
}
