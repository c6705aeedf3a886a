package assignor

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

func randomGroup(r *rand.Rand) (GroupSpec, describer) {
	var topo describer
	for i := range 1 + r.IntN(4) {
		topo = append(topo, Subtopology{ID: fmt.Sprint(i), NumTasks: int32(r.IntN(13)), Stateful: r.IntN(2) == 0})
	}
	randomTasks := func() Tasks {
		ts := Tasks{}
		for range r.IntN(4) {
			sub := fmt.Sprint(r.IntN(5)) // sometimes a subtopology that is gone
			ts[sub] = append(ts[sub], int32(r.IntN(15)-1))
		}
		return ts
	}
	spec := GroupSpec{Members: map[string]MemberSpec{}, Configs: map[string]string{}}
	if n := r.IntN(5); n < 4 {
		spec.Configs[ConfigNumStandbyReplicas] = fmt.Sprint([]int{0, 1, 2, 7}[n])
	}
	processes := 1 + r.IntN(8)
	for i := range 1 + r.IntN(20) {
		ms := MemberSpec{ProcessID: fmt.Sprintf("process-%d", r.IntN(processes))}
		if r.IntN(3) > 0 {
			ms.ActiveTasks = randomTasks()
			ms.StandbyTasks = randomTasks()
		}
		if r.IntN(3) == 0 {
			ms.TaskOffsets = map[string]map[int32]int64{}
			for range r.IntN(4) {
				sub := fmt.Sprint(r.IntN(4))
				if ms.TaskOffsets[sub] == nil {
					ms.TaskOffsets[sub] = map[int32]int64{}
				}
				ms.TaskOffsets[sub][int32(r.IntN(13))] = r.Int64N(1000)
			}
		}
		spec.Members[fmt.Sprintf("member-%02d", i)] = ms
	}
	return spec, topo
}

func cloneSpec(s GroupSpec) GroupSpec {
	out := GroupSpec{Members: map[string]MemberSpec{}, Configs: map[string]string{}}
	for k, v := range s.Configs {
		out.Configs[k] = v
	}
	cloneTasks := func(ts Tasks) Tasks {
		if ts == nil {
			return nil
		}
		c := Tasks{}
		for k, v := range ts {
			c[k] = append([]int32(nil), v...)
		}
		return c
	}
	for id, m := range s.Members {
		c := m
		c.ActiveTasks, c.StandbyTasks = cloneTasks(m.ActiveTasks), cloneTasks(m.StandbyTasks)
		if m.TaskOffsets != nil {
			c.TaskOffsets = map[string]map[int32]int64{}
			for k, v := range m.TaskOffsets {
				c.TaskOffsets[k] = map[int32]int64{}
				for p, o := range v {
					c.TaskOffsets[k][p] = o
				}
			}
		}
		out.Members[id] = c
	}
	return out
}

// TestStickyProperties runs the assignor on random groups: the invariants
// hold, inputs are untouched, the result is deterministic, and feeding a
// result back as the previous assignment keeps every active task where it
// is (a balanced assignment is stable).
func TestStickyProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	stable := 0
	for i := range 5000 {
		spec, topo := randomGroup(r)
		before := cloneSpec(spec)
		ga, err := StickyTaskAssignor{}.Assign(spec, topo)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if !reflect.DeepEqual(spec, before) {
			t.Fatalf("case %d: input modified", i)
		}
		checkInvariants(t, spec, topo, ga)
		if again, _ := (StickyTaskAssignor{}).Assign(spec, topo); !reflect.DeepEqual(ga, again) {
			t.Fatalf("case %d: not deterministic", i)
		}

		// Stability: the result as the previous (current) assignment.
		next := cloneSpec(spec)
		for id, m := range next.Members {
			m.ActiveTasks, m.StandbyTasks, m.TaskOffsets = ga.Members[id].ActiveTasks, ga.Members[id].StandbyTasks, nil
			next.Members[id] = m
		}
		if !balanced(ga) {
			continue
		}
		stable++
		ga2, err := StickyTaskAssignor{}.Assign(next, topo)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		checkInvariants(t, next, topo, ga2)
		for id := range ga.Members {
			if !sameTasks(ga.Members[id].ActiveTasks, ga2.Members[id].ActiveTasks) {
				t.Fatalf("case %d: member %s moved from %v to %v", i, id, ga.Members[id].ActiveTasks, ga2.Members[id].ActiveTasks)
			}
		}
	}
	if stable < 1000 {
		t.Fatalf("only %d cases checked for stability", stable)
	}
}

// balanced: active task counts per member differ by at most one.
func balanced(ga GroupAssignment) bool {
	lo, hi := -1, 0
	for _, a := range ga.Members {
		n := count(a.ActiveTasks)
		if lo < 0 || n < lo {
			lo = n
		}
		hi = max(hi, n)
	}
	return hi-lo <= 1
}

func sameTasks(a, b Tasks) bool {
	norm := func(ts Tasks) map[string][]int32 {
		out := map[string][]int32{}
		for s, p := range ts {
			if len(p) > 0 {
				out[s] = sorted(p)
			}
		}
		return out
	}
	return reflect.DeepEqual(norm(a), norm(b))
}
