package streams

import (
	"errors"
	"maps"
)

// taskOwnership answers who currently holds a task, counting assigned and
// pending-revocation tasks of every member (Kafka's currentActiveTaskProcessId
// and currentStandby/WarmupTaskProcessIds).
type taskOwnership interface {
	activeProcess(t TaskID) (string, bool)
	standbyCount(t TaskID, process string) int
	warmupCount(t TaskID, process string) int
}

func (g *Group) standbyCount(t TaskID, process string) int { return g.StandbyOwners[t][process] }
func (g *Group) warmupCount(t TaskID, process string) int  { return g.WarmupOwners[t][process] }

var errUnknownMemberState = errors.New("the streams group member is in an unknown state; it must abandon all its tasks and rejoin")

// reconcile is Kafka's CurrentAssignmentBuilder: it moves a member's current
// assignment one step towards its target. It returns cur itself when nothing
// changes. owned is nil when the request did not carry the owned task lists.
//
// Revocation comes before assignment: a task leaves its owner before anyone
// else gets it, and a member keeps its epoch until it has revoked what it must.
// A task is unreleased while it is held elsewhere: an active task while any
// member holds it as active or another member of this process holds it as
// standby or warm-up; a standby or warm-up task while another member of this
// process holds it in any role. Kafka 4.4 changes the role of a member's own
// task in place: active to standby is granted at once (the active stays
// pending revocation), standby and warm-up swap without acknowledgement, and
// standby or warm-up become active once nobody else holds the active task.
func reconcile(cur *CurrentMemberAssignmentValue, process string, targetEpoch int32, target TaskSets, owned *TaskSets, own taskOwnership) (*CurrentMemberAssignmentValue, error) {
	switch cur.State {
	case MemberStable:
		if cur.MemberEpoch == targetEpoch {
			return cur, nil
		}
		return nextAssignment(cur, process, cur.MemberEpoch, targetEpoch, target, owned, own), nil
	case MemberUnrevokedTasks:
		if owned == nil || owned.containsAny(cur.PendingRevocation) {
			return cur, nil
		}
		return nextAssignment(cur, process, cur.MemberEpoch+1, targetEpoch, target, owned, own), nil
	case MemberUnreleasedTasks:
		return nextAssignment(cur, process, cur.MemberEpoch, targetEpoch, target, owned, own), nil
	default:
		if owned == nil || !owned.IsEmpty() {
			return nil, errUnknownMemberState
		}
		return nextAssignment(cur, process, targetEpoch, targetEpoch, target, owned, own), nil
	}
}

func nextAssignment(cur *CurrentMemberAssignmentValue, process string, memberEpoch, targetEpoch int32, target TaskSets, owned *TaskSets, own taskOwnership) *CurrentMemberAssignmentValue {
	a := cur.Assigned
	var (
		kept     [3]TasksBuilder
		revoke   [3]TasksBuilder
		toAssign [3]TasksBuilder
		inPlace  [3]TasksBuilder
	)
	for i := range 3 {
		kept[i], revoke[i], toAssign[i], inPlace[i] = TasksBuilder{}, TasksBuilder{}, TasksBuilder{}, TasksBuilder{}
	}
	roles := [3]Tasks{a.Active, a.Standby, a.Warmup}
	targets := [3]Tasks{target.Active, target.Standby, target.Warmup}
	// revokeSet marks the tasks of each role that leave the member; in-place
	// role changes take some of them out again.
	revokeSet := [3]map[TaskID]bool{{}, {}, {}}
	for r := range 3 {
		ForEachTask(roles[r], func(t TaskID) {
			if TasksContains(targets[r], t.Subtopology, t.Partition) {
				kept[r].Add(t.Subtopology, t.Partition)
			} else {
				revokeSet[r][t] = true
			}
		})
	}
	unreleased := false
	const active, standby, warmup = 0, 1, 2
	selfHolds := func(r int, t TaskID) bool { return TasksContains(roles[r], t.Subtopology, t.Partition) }
	// othersOnProcess: does another member of this process hold t in role r?
	othersOnProcess := func(r int, t TaskID) bool {
		n := 0
		switch r {
		case standby:
			n = own.standbyCount(t, process)
		case warmup:
			n = own.warmupCount(t, process)
		}
		if selfHolds(r, t) {
			n--
		}
		return n > 0
	}

	// Active tasks to assign.
	ForEachTask(targets[active], func(t TaskID) {
		if selfHolds(active, t) {
			return
		}
		_, activeHeld := own.activeProcess(t)
		blocked := activeHeld || othersOnProcess(standby, t) || othersOnProcess(warmup, t)
		from := -1
		if selfHolds(standby, t) {
			from = standby
		} else if selfHolds(warmup, t) {
			from = warmup
		}
		switch {
		case blocked:
			unreleased = true
			if from >= 0 {
				// Keep the standby (or warm-up) until it can turn active.
				delete(revokeSet[from], t)
				kept[from].Add(t.Subtopology, t.Partition)
			}
		case from >= 0:
			delete(revokeSet[from], t)
			inPlace[active].Add(t.Subtopology, t.Partition)
		default:
			toAssign[active].Add(t.Subtopology, t.Partition)
		}
	})
	// Standby and warm-up tasks to assign.
	for _, r := range [2]int{standby, warmup} {
		other := standby + warmup - r
		ForEachTask(targets[r], func(t TaskID) {
			if selfHolds(r, t) {
				return
			}
			ap, activeHeld := own.activeProcess(t)
			selfActive := selfHolds(active, t)
			blocked := (activeHeld && ap == process && !selfActive) || othersOnProcess(r, t) || othersOnProcess(other, t)
			switch {
			case blocked:
				unreleased = true
			case selfActive:
				// The active stays pending revocation; the new role is granted.
				inPlace[r].Add(t.Subtopology, t.Partition)
			case selfHolds(other, t):
				delete(revokeSet[other], t)
				inPlace[r].Add(t.Subtopology, t.Partition)
			default:
				toAssign[r].Add(t.Subtopology, t.Partition)
			}
		})
	}

	for r := range 3 {
		for t := range revokeSet[r] {
			revoke[r].Add(t.Subtopology, t.Partition)
		}
	}
	pending := TaskSets{revoke[0].Build(), revoke[1].Build(), revoke[2].Build()}
	keptSets := TaskSets{kept[0].Build(), kept[1].Build(), kept[2].Build()}
	inPlaceSets := TaskSets{inPlace[0].Build(), inPlace[1].Build(), inPlace[2].Build()}
	assignSets := TaskSets{toAssign[0].Build(), toAssign[1].Build(), toAssign[2].Build()}

	next := &CurrentMemberAssignmentValue{PreviousMemberEpoch: cur.MemberEpoch}
	switch {
	case !pending.IsEmpty() && (owned == nil || owned.containsAny(pending)):
		next.State = MemberUnrevokedTasks
		next.MemberEpoch = memberEpoch
		next.Assigned = unionSets(keptSets, inPlaceSets)
		next.PendingRevocation = pending
	case !assignSets.IsEmpty() || !inPlaceSets.IsEmpty():
		next.State = MemberStable
		if unreleased {
			next.State = MemberUnreleasedTasks
		}
		next.MemberEpoch = targetEpoch
		next.Assigned = unionSets(unionSets(keptSets, inPlaceSets), assignSets)
	case unreleased:
		next.State = MemberUnreleasedTasks
		next.MemberEpoch = targetEpoch
		next.Assigned = keptSets
	default:
		next.State = MemberStable
		next.MemberEpoch = targetEpoch
		next.Assigned = keptSets
	}
	next.ActiveEpochs = activeEpochs(cur, next.Assigned.Active, next.PendingRevocation.Active, targetEpoch)
	if sameCurrent(cur, next) {
		return cur
	}
	return next
}

func unionSets(a, b TaskSets) TaskSets {
	return TaskSets{TasksUnion(a.Active, b.Active), TasksUnion(a.Standby, b.Standby), TasksUnion(a.Warmup, b.Warmup)}
}

// activeEpochs gives the assignment epoch of every active task, assigned or
// pending revocation (OffsetCommit accepts older epochs per task): kept and
// revoking tasks keep theirs, newly granted ones get the target epoch.
func activeEpochs(cur *CurrentMemberAssignmentValue, active, pending Tasks, targetEpoch int32) map[TaskID]int32 {
	if len(active) == 0 && len(pending) == 0 {
		return nil
	}
	out := make(map[TaskID]int32, TasksCount(active)+TasksCount(pending))
	for _, ts := range [2]Tasks{active, pending} {
		ForEachTask(ts, func(t TaskID) {
			if e, ok := cur.ActiveEpochs[t]; ok {
				out[t] = e
			} else {
				out[t] = targetEpoch
			}
		})
	}
	return out
}

// restrictEpochs keeps the epochs of the given active tasks only, set to
// epoch when setTo is true.
func restrictEpochs(epochs map[TaskID]int32, active Tasks, setTo bool, epoch int32) map[TaskID]int32 {
	if len(active) == 0 {
		return nil
	}
	out := make(map[TaskID]int32, TasksCount(active))
	ForEachTask(active, func(t TaskID) {
		e, ok := epochs[t]
		if setTo || !ok {
			e = epoch
		}
		out[t] = e
	})
	return out
}

func sameCurrent(a, b *CurrentMemberAssignmentValue) bool {
	return a.MemberEpoch == b.MemberEpoch && a.PreviousMemberEpoch == b.PreviousMemberEpoch &&
		a.State == b.State && a.Assigned.Equal(b.Assigned) && a.PendingRevocation.Equal(b.PendingRevocation) &&
		maps.Equal(a.ActiveEpochs, b.ActiveEpochs)
}
