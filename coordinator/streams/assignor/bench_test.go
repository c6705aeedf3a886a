package assignor

import (
	"fmt"
	"testing"
)

// benchGroup is the benchmark shape: members on processes, all
// subtopologies stateful, and optionally the previous assignment of an
// identical run with one process replaced (the churn case).
func benchGroup(b *testing.B, processes, perProcess, subtopologies, tasks int, churn bool) (GroupSpec, describer) {
	var topo describer
	for i := range subtopologies {
		topo = append(topo, Subtopology{ID: fmt.Sprint(i), NumTasks: int32(tasks), Stateful: true})
	}
	spec := GroupSpec{Members: map[string]MemberSpec{}, Configs: map[string]string{ConfigNumStandbyReplicas: "1"}}
	for p := range processes {
		for m := range perProcess {
			spec.Members[fmt.Sprintf("member-%03d-%d", p, m)] = MemberSpec{ProcessID: fmt.Sprintf("process-%03d", p)}
		}
	}
	if !churn {
		return spec, topo
	}
	prev, err := StickyTaskAssignor{}.Assign(spec, topo)
	if err != nil {
		b.Fatal(err)
	}
	next := GroupSpec{Members: map[string]MemberSpec{}, Configs: spec.Configs}
	for id, ms := range spec.Members {
		if ms.ProcessID == "process-007" {
			continue
		}
		ms.ActiveTasks, ms.StandbyTasks = prev.Members[id].ActiveTasks, prev.Members[id].StandbyTasks
		next.Members[id] = ms
	}
	for m := range perProcess {
		next.Members[fmt.Sprintf("member-new-%d", m)] = MemberSpec{ProcessID: "process-new"}
	}
	return next, topo
}

// BenchmarkStickyAssign: 1,000 members on 200 processes, 10,000 tasks, one
// standby. The comparison with Kafka's Java assignor on identical input is
// bench/assignor-java/run.sh.
func BenchmarkStickyAssign(b *testing.B) {
	for _, churn := range []bool{false, true} {
		name := "cold"
		if churn {
			name = "churn"
		}
		b.Run(name, func(b *testing.B) {
			spec, topo := benchGroup(b, 200, 5, 10, 1000, churn)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := (StickyTaskAssignor{}).Assign(spec, topo); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStickyAssignRackAware is the cold case with
// rack.aware.assignment.tags: the 200 processes in 3 zones.
func BenchmarkStickyAssignRackAware(b *testing.B) {
	spec, topo := benchGroup(b, 200, 5, 10, 1000, false)
	spec.Configs = map[string]string{ConfigNumStandbyReplicas: "1", ConfigRackAwareAssignmentTags: "zone"}
	for id, ms := range spec.Members {
		var p int
		fmt.Sscanf(ms.ProcessID, "process-%d", &p)
		ms.ClientTags = map[string]string{"zone": fmt.Sprint("z", p%3)}
		spec.Members[id] = ms
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := (StickyTaskAssignor{}).Assign(spec, topo); err != nil {
			b.Fatal(err)
		}
	}
}
