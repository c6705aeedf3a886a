package assignor

import (
	"fmt"
	"testing"
)

// checkInvariants asserts what every assignment must satisfy: each member
// has an entry; every task is active exactly once; no process holds a task
// twice in any role; standbys only for stateful subtopologies and at most
// num.standby.replicas of them; and active tasks are balanced within one
// task across members.
func checkInvariants(t *testing.T, spec GroupSpec, topo TopologyDescriber, ga GroupAssignment) {
	t.Helper()
	if len(ga.Members) != len(spec.Members) {
		t.Fatalf("%d members in the assignment, %d in the group", len(ga.Members), len(spec.Members))
	}
	var ts []Subtopology
	if topo != nil {
		ts = topo.Subtopologies()
	}
	known := map[string]Subtopology{}
	for _, s := range ts {
		known[s.ID] = s
	}
	type task struct {
		sub  string
		part int32
	}
	activeOwner := map[task]string{}
	byProcess := map[task]map[string]bool{}
	standbys := map[task]int{}
	hold := func(id string, tk task) {
		p := spec.Members[id].ProcessID
		if byProcess[tk] == nil {
			byProcess[tk] = map[string]bool{}
		}
		if byProcess[tk][p] {
			t.Fatalf("process %q holds task %v twice", p, tk)
		}
		byProcess[tk][p] = true
	}
	minActive, maxActive := -1, 0
	for id, a := range ga.Members {
		if _, ok := spec.Members[id]; !ok {
			t.Fatalf("unknown member %s assigned", id)
		}
		n := 0
		for sub, parts := range a.ActiveTasks {
			for _, p := range parts {
				tk := task{sub, p}
				if s, ok := known[sub]; !ok || p < 0 || p >= s.NumTasks {
					t.Fatalf("unknown task %v", tk)
				}
				if prev, dup := activeOwner[tk]; dup {
					t.Fatalf("task %v active on %s and %s", tk, prev, id)
				}
				activeOwner[tk] = id
				hold(id, tk)
				n++
			}
		}
		if minActive < 0 || n < minActive {
			minActive = n
		}
		maxActive = max(maxActive, n)
		for sub, parts := range a.StandbyTasks {
			for _, p := range parts {
				tk := task{sub, p}
				if s, ok := known[sub]; !ok || !s.Stateful || p < 0 || p >= s.NumTasks {
					t.Fatalf("standby of non-stateful or unknown task %v", tk)
				}
				hold(id, tk)
				standbys[tk]++
			}
		}
		if len(a.WarmupTasks) > 0 {
			t.Fatalf("warm-up tasks produced")
		}
	}
	total := 0
	for _, s := range ts {
		total += int(s.NumTasks)
	}
	if len(activeOwner) != total {
		t.Fatalf("%d tasks active, want %d", len(activeOwner), total)
	}
	want := 0
	fmt.Sscan(spec.Configs[ConfigNumStandbyReplicas], &want)
	for tk, n := range standbys {
		if n > want {
			t.Fatalf("task %v has %d standbys, want at most %d", tk, n, want)
		}
	}
	// With no previous assignment at all, actives differ by at most one.
	fresh := true
	for _, m := range spec.Members {
		if len(m.ActiveTasks)+len(m.StandbyTasks)+len(m.TaskOffsets) > 0 {
			fresh = false
		}
	}
	if fresh && len(spec.Members) > 0 && maxActive-minActive > 1 {
		t.Fatalf("unbalanced fresh assignment: %d..%d active tasks per member", minActive, maxActive)
	}
}
