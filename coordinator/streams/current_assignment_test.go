package streams

import (
	"errors"
	"testing"
)

func TestReconcile(t *testing.T) {
	t0 := TaskID{"0", 0}
	stable := func(epoch int32, a TaskSets) *CurrentMemberAssignmentValue {
		return &CurrentMemberAssignmentValue{MemberEpoch: epoch, PreviousMemberEpoch: epoch - 1, State: MemberStable, Assigned: a}
	}
	cases := []struct {
		name       string
		cur        *CurrentMemberAssignmentValue
		target     TaskSets
		owned      *TaskSets
		own        fakeOwnership
		wantState  MemberState
		wantEpoch  int32
		wantAssign TaskSets
		wantPend   TaskSets
	}{
		{
			name: "stable at target epoch stays", cur: stable(5, TaskSets{Active: tasks("0", 0)}),
			target: TaskSets{}, wantState: MemberStable, wantEpoch: 5, wantAssign: TaskSets{Active: tasks("0", 0)},
		},
		{
			name: "revocation without owned lists waits", cur: stable(4, TaskSets{Active: tasks("0", 0, 1)}),
			target: TaskSets{Active: tasks("0", 1)}, own: fakeOwnership{active: map[TaskID]string{t0: "p1", {"0", 1}: "p1"}},
			wantState: MemberUnrevokedTasks, wantEpoch: 4, wantAssign: TaskSets{Active: tasks("0", 1)}, wantPend: TaskSets{Active: tasks("0", 0)},
		},
		{
			name: "revocation already done by the client", cur: stable(4, TaskSets{Active: tasks("0", 0, 1)}),
			target: TaskSets{Active: tasks("0", 1)}, owned: &TaskSets{Active: tasks("0", 1)}, own: fakeOwnership{active: map[TaskID]string{t0: "p1", {"0", 1}: "p1"}},
			wantState: MemberStable, wantEpoch: 5, wantAssign: TaskSets{Active: tasks("0", 1)},
		},
		{
			name: "unrevoked still owning", cur: &CurrentMemberAssignmentValue{MemberEpoch: 4, State: MemberUnrevokedTasks, Assigned: TaskSets{Active: tasks("0", 1)}, PendingRevocation: TaskSets{Active: tasks("0", 0)}},
			target: TaskSets{Active: tasks("0", 1)}, owned: &TaskSets{Active: tasks("0", 0, 1)},
			wantState: MemberUnrevokedTasks, wantEpoch: 4, wantAssign: TaskSets{Active: tasks("0", 1)}, wantPend: TaskSets{Active: tasks("0", 0)},
		},
		{
			name: "unrevoked done moves to the target", cur: &CurrentMemberAssignmentValue{MemberEpoch: 4, State: MemberUnrevokedTasks, Assigned: TaskSets{Active: tasks("0", 1)}, PendingRevocation: TaskSets{Active: tasks("0", 0)}},
			target: TaskSets{Active: tasks("0", 1)}, owned: &TaskSets{Active: tasks("0", 1)},
			wantState: MemberStable, wantEpoch: 5, wantAssign: TaskSets{Active: tasks("0", 1)},
		},
		{
			name: "active to standby in place", cur: stable(4, TaskSets{Active: tasks("0", 0)}),
			target: TaskSets{Standby: tasks("0", 0)}, own: fakeOwnership{active: map[TaskID]string{t0: "p1"}},
			wantState: MemberUnrevokedTasks, wantEpoch: 4, wantAssign: TaskSets{Standby: tasks("0", 0)}, wantPend: TaskSets{Active: tasks("0", 0)},
		},
		{
			name: "standby to warm-up without acknowledgement", cur: stable(4, TaskSets{Standby: tasks("0", 0)}),
			target: TaskSets{Warmup: tasks("0", 0)}, own: fakeOwnership{standby: map[TaskID]map[string]int{t0: {"p1": 1}}},
			wantState: MemberStable, wantEpoch: 5, wantAssign: TaskSets{Warmup: tasks("0", 0)},
		},
		{
			name: "standby to active when free", cur: stable(4, TaskSets{Standby: tasks("0", 0)}),
			target: TaskSets{Active: tasks("0", 0)}, own: fakeOwnership{standby: map[TaskID]map[string]int{t0: {"p1": 1}}},
			wantState: MemberStable, wantEpoch: 5, wantAssign: TaskSets{Active: tasks("0", 0)},
		},
		{
			name: "standby kept while the active is elsewhere", cur: stable(4, TaskSets{Standby: tasks("0", 0)}),
			target: TaskSets{Active: tasks("0", 0)}, own: fakeOwnership{active: map[TaskID]string{t0: "p2"}, standby: map[TaskID]map[string]int{t0: {"p1": 1}}},
			wantState: MemberUnreleasedTasks, wantEpoch: 5, wantAssign: TaskSets{Standby: tasks("0", 0)},
		},
		{
			name: "standby blocked by an active on the same process", cur: stable(4, TaskSets{}),
			target: TaskSets{Standby: tasks("0", 0)}, own: fakeOwnership{active: map[TaskID]string{t0: "p1"}},
			wantState: MemberUnreleasedTasks, wantEpoch: 5,
		},
		{
			name: "standby free when the active is on another process", cur: stable(4, TaskSets{}),
			target: TaskSets{Standby: tasks("0", 0)}, own: fakeOwnership{active: map[TaskID]string{t0: "p2"}},
			wantState: MemberStable, wantEpoch: 5, wantAssign: TaskSets{Standby: tasks("0", 0)},
		},
		{
			name: "warm-up blocked by a standby on the same process", cur: stable(4, TaskSets{}),
			target: TaskSets{Warmup: tasks("0", 0)}, own: fakeOwnership{standby: map[TaskID]map[string]int{t0: {"p1": 1}}},
			wantState: MemberUnreleasedTasks, wantEpoch: 5,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := reconcile(tc.cur, "p1", 5, tc.target, tc.owned, tc.own)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != tc.wantState || got.MemberEpoch != tc.wantEpoch || !got.Assigned.Equal(tc.wantAssign) || !got.PendingRevocation.Equal(tc.wantPend) {
				t.Fatalf("got state %v epoch %d assigned %+v pending %+v", got.State, got.MemberEpoch, got.Assigned, got.PendingRevocation)
			}
			if got.MemberEpoch != tc.cur.MemberEpoch && got.PreviousMemberEpoch != tc.cur.MemberEpoch {
				t.Fatalf("previous epoch %d, want %d", got.PreviousMemberEpoch, tc.cur.MemberEpoch)
			}
		})
	}
}

func TestReconcileUnknownState(t *testing.T) {
	cur := &CurrentMemberAssignmentValue{MemberEpoch: 3, State: MemberUnknown, Assigned: TaskSets{Active: tasks("0", 0)}}
	if _, err := reconcile(cur, "p1", 5, TaskSets{}, &TaskSets{Active: tasks("0", 0)}, fakeOwnership{}); !errors.Is(err, errUnknownMemberState) {
		t.Fatalf("err %v", err)
	}
	next, err := reconcile(cur, "p1", 5, TaskSets{}, &TaskSets{}, fakeOwnership{})
	if err != nil || next.MemberEpoch != 5 {
		t.Fatalf("next %+v err %v", next, err)
	}
}

// §11.38: an active task moves only once its owner dropped it, and not while
// another member of the new owner's process holds it as a standby.
func TestScenario38ActiveTaskMove(t *testing.T) {
	own := fakeOwnership{active: map[TaskID]string{{"0", 0}: "pA"}, standby: map[TaskID]map[string]int{}}
	cur := &CurrentMemberAssignmentValue{MemberEpoch: 4, PreviousMemberEpoch: 3, State: MemberStable}
	target := TaskSets{Active: tasks("0", 0)}
	next, _ := reconcile(cur, "pB", 5, target, &TaskSets{}, own)
	if next.State != MemberUnreleasedTasks || !next.Assigned.IsEmpty() || next.MemberEpoch != 5 {
		t.Fatalf("while A owns it: %+v", next)
	}
	delete(own.active, TaskID{"0", 0})
	own.standby[TaskID{"0", 0}] = map[string]int{"pB": 1} // another member of pB
	next2, _ := reconcile(next, "pB", 5, target, &TaskSets{}, own)
	if next2.State != MemberUnreleasedTasks || !next2.Assigned.IsEmpty() {
		t.Fatalf("while a standby on pB: %+v", next2)
	}
	delete(own.standby, TaskID{"0", 0})
	next3, _ := reconcile(next2, "pB", 5, target, &TaskSets{}, own)
	if next3.State != MemberStable || !TasksEqual(next3.Assigned.Active, tasks("0", 0)) || next3.ActiveEpochs[TaskID{"0", 0}] != 5 {
		t.Fatalf("free: %+v", next3)
	}
}

type fakeOwnership struct {
	active  map[TaskID]string
	standby map[TaskID]map[string]int
	warmup  map[TaskID]map[string]int
}

func (f fakeOwnership) activeProcess(t TaskID) (string, bool) {
	p, ok := f.active[t]
	return p, ok
}
func (f fakeOwnership) standbyCount(t TaskID, p string) int { return f.standby[t][p] }
func (f fakeOwnership) warmupCount(t TaskID, p string) int  { return f.warmup[t][p] }
