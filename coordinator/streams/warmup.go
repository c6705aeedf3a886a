package streams

import (
	"math"
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Warm-up tasks (KIP-1071; beyond Kafka 4.4, which never assigns them: its
// AssignmentRefiner is a no-op). The assignor decides where a task goes; the
// refinement below decides how the group gets there. When the assignor moves
// a stateful active task away from its current owner to a member of another
// process that has no caught-up state for it, the active stays with its
// owner and the new member gets the task as a warm-up (a standby that
// restores on the client), at most streams.num.warmup.replicas in the group
// at once. A warm-up whose lag (TaskEndOffsets − TaskOffsets) is at most
// streams.acceptable.recovery.lag is caught up: the member's heartbeat bumps
// the group epoch, and the next target gives it the active, which it takes
// over in place once the old owner has revoked it.
//
// The refined assignment is the target written to the log, so warm-ups are
// derived from records after a failover: a target warm-up is a held-back
// active, and the reported offsets (in memory, resent by the client after a
// reconnect) tell when it is caught up. With 0 warm-ups the target is the
// assignor's, as in Kafka 4.4.

// warmupMove is an active task the assignor gives to member To while member
// From still runs it.
type warmupMove struct {
	Task     TaskID
	From, To string
	warming  bool // To already warms the task up (kept first within the budget)
}

// refineWarmups turns the assignor's targets into the group's target: see
// the comment at the top of the file. targets is modified in place.
func refineWarmups(g *Group, configured *configuredTopology, targets map[string]TaskSets, budget int, acceptableLag int64) {
	if budget <= 0 || !configured.IsReady() {
		return
	}
	stateful := map[string]bool{}
	for _, s := range configured.ConfiguredSubtopologies {
		if s.Stateful {
			stateful[s.ID] = true
		}
	}
	if len(stateful) == 0 {
		return
	}
	owner := currentActiveOwners(g)
	ends := maxEndOffsets(g)
	ids := make([]string, 0, len(targets))
	for id := range targets {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var moves []warmupMove
	for _, id := range ids {
		to := g.Members[id]
		if to == nil || to.IsClassic() {
			// A classic member reports offsets only when it joins: it
			// could never be seen caught up, so it gets actives at once.
			continue
		}
		offsets := taskOffsetMap(to.TaskOffsets)
		ForEachTask(targets[id].Active, func(t TaskID) {
			if !stateful[t.Subtopology] {
				return
			}
			from, ok := owner[t]
			if !ok || from == id {
				return
			}
			fm := g.Members[from]
			if fm == nil || fm.ProcessID() == to.ProcessID() {
				// Members of one process share its state directory.
				return
			}
			if caughtUp(t, offsets, ends, acceptableLag) {
				return
			}
			moves = append(moves, warmupMove{Task: t, From: from, To: id,
				warming: TasksContains(to.CurrentAssignment().Assigned.Warmup, t.Subtopology, t.Partition)})
		})
	}
	if len(moves) == 0 {
		return
	}
	// Warm-ups in progress keep their place in the budget; then member and
	// task order, so the refinement is deterministic.
	sort.SliceStable(moves, func(i, j int) bool {
		a, b := moves[i], moves[j]
		if a.warming != b.warming {
			return a.warming
		}
		if a.To != b.To {
			return a.To < b.To
		}
		if a.Task.Subtopology != b.Task.Subtopology {
			return a.Task.Subtopology < b.Task.Subtopology
		}
		return a.Task.Partition < b.Task.Partition
	})
	only := func(t TaskID) Tasks { return Tasks{t.Subtopology: {t.Partition}} }
	for i, mv := range moves {
		one := only(mv.Task)
		to := targets[mv.To]
		to.Active = TasksMinus(to.Active, one)
		to.Standby = TasksMinus(to.Standby, one)
		switch {
		case i < budget:
			to.Warmup = TasksUnion(to.Warmup, one)
		case TasksContains(g.Members[mv.To].CurrentAssignment().Assigned.Standby, mv.Task.Subtopology, mv.Task.Partition):
			// Over the budget, a standby the member has stays a standby.
			to.Standby = TasksUnion(to.Standby, one)
		}
		targets[mv.To] = to
		// The owner keeps the active; no other member of its process may
		// hold the task (the processId rule).
		fromProcess := g.Members[mv.From].ProcessID()
		for _, id := range ids {
			if id == mv.From || id == mv.To {
				continue
			}
			if m := g.Members[id]; m != nil && m.ProcessID() == fromProcess {
				ts := targets[id]
				ts.Standby, ts.Warmup = TasksMinus(ts.Standby, one), TasksMinus(ts.Warmup, one)
				targets[id] = ts
			}
		}
		from := targets[mv.From]
		from.Active = TasksUnion(from.Active, one)
		from.Standby, from.Warmup = TasksMinus(from.Standby, one), TasksMinus(from.Warmup, one)
		targets[mv.From] = from
	}
}

// currentActiveOwners maps every task some member runs as active (assigned,
// else pending revocation) to that member.
func currentActiveOwners(g *Group) map[TaskID]string {
	out := map[TaskID]string{}
	ids := make([]string, 0, len(g.Members))
	for id := range g.Members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		c := g.Members[id].CurrentAssignment()
		ForEachTask(c.PendingRevocation.Active, func(t TaskID) {
			if _, ok := out[t]; !ok {
				out[t] = id
			}
		})
	}
	for _, id := range ids {
		ForEachTask(g.Members[id].CurrentAssignment().Assigned.Active, func(t TaskID) { out[t] = id })
	}
	return out
}

// maxEndOffsets is the largest changelog end-offset sum any member reported
// per task: a changelog's end is the same for every reader, and a member
// whose state is only on disk (dormant) reports no end offsets.
func maxEndOffsets(g *Group) map[TaskID]int64 {
	out := map[TaskID]int64{}
	for _, m := range g.Members {
		for _, o := range m.TaskEndOffsets {
			if o.Offset == math.MaxInt64 || o.Offset < 0 {
				continue
			}
			t := TaskID{o.SubtopologyID, o.Partition}
			if e, ok := out[t]; !ok || o.Offset > e {
				out[t] = o.Offset
			}
		}
	}
	return out
}

func taskOffsetMap(offsets []kmsg.TaskOffset) map[TaskID]int64 {
	if len(offsets) == 0 {
		return nil
	}
	out := make(map[TaskID]int64, len(offsets))
	for _, o := range offsets {
		out[TaskID{o.SubtopologyID, o.Partition}] = o.Offset
	}
	return out
}

// caughtUp is the Streams client's hot-warm-up test
// (StreamsGroupHeartbeatRequestManager.hasAtLeastOneHotWarmupTask): end −
// offset ≤ acceptable.recovery.lag, unknown or overflowed (MAX_VALUE) sums
// are not caught up. A changelog whose end is within the lag is caught up
// whatever the member restored, since offsets start at 0.
func caughtUp(t TaskID, offsets, ends map[TaskID]int64, acceptableLag int64) bool {
	end, ok := ends[t]
	if !ok {
		return false
	}
	if end <= acceptableLag {
		return true
	}
	off, ok := offsets[t]
	if !ok || off == math.MaxInt64 || off < 0 {
		return false
	}
	return end-off <= acceptableLag
}

// warmupCaughtUp reports whether one of the member's target warm-ups is now
// caught up, by the offsets it reported: Kafka's KIP-1071 reason for a group
// epoch bump.
func warmupCaughtUp(g *Group, m *Member, acceptableLag int64) bool {
	w := g.Target[m.ID].Warmup
	if len(w) == 0 {
		return false
	}
	offsets := taskOffsetMap(m.TaskOffsets)
	ends := maxEndOffsets(g)
	found := false
	ForEachTask(w, func(t TaskID) {
		if !found && caughtUp(t, offsets, ends, acceptableLag) {
			found = true
		}
	})
	return found
}
