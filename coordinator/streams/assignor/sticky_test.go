package assignor

import (
	"maps"
	"reflect"
	"slices"
	"sort"
	"testing"
)

// describer is a fixed TopologyDescriber for tests.
type describer []Subtopology

func (d describer) Subtopologies() []Subtopology { return d }

func subs(numTasks int32, stateful bool, ids ...string) describer {
	var d describer
	for _, id := range ids {
		d = append(d, Subtopology{ID: id, NumTasks: numTasks, Stateful: stateful})
	}
	return d
}

func member(process string) MemberSpec { return MemberSpec{ProcessID: process} }

func withActive(ms MemberSpec, sub string, parts ...int32) MemberSpec {
	ms.ActiveTasks = Tasks{sub: parts}
	return ms
}

func withStandby(ms MemberSpec, sub string, parts ...int32) MemberSpec {
	ms.StandbyTasks = Tasks{sub: parts}
	return ms
}

func assign(t *testing.T, members map[string]MemberSpec, standbys string, topo TopologyDescriber) GroupAssignment {
	t.Helper()
	spec := GroupSpec{Members: members}
	if standbys != "" {
		spec.Configs = map[string]string{ConfigNumStandbyReplicas: standbys}
	}
	ga, err := StickyTaskAssignor{}.Assign(spec, topo)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, spec, topo, ga)
	return ga
}

func sorted(parts []int32) []int32 {
	out := append([]int32(nil), parts...)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func count(ts Tasks) int {
	n := 0
	for _, p := range ts {
		n += len(p)
	}
	return n
}

// allOf merges the tasks of the named members.
func allOf(ga GroupAssignment, standby bool, ids ...string) map[string][]int32 {
	out := map[string][]int32{}
	for _, id := range ids {
		ts := ga.Members[id].ActiveTasks
		if standby {
			ts = ga.Members[id].StandbyTasks
		}
		for s, p := range ts {
			out[s] = sorted(append(out[s], p...))
		}
	}
	return out
}

// wantActives checks the active tasks of each listed member, in member id
// order, with wantTasks.
func wantActives(t *testing.T, ga GroupAssignment, want map[string]Tasks) {
	t.Helper()
	for _, id := range slices.Sorted(maps.Keys(want)) {
		wantTasks(t, id, ga.Members[id].ActiveTasks, want[id])
	}
}

func wantTasks(t *testing.T, what string, got Tasks, want Tasks) {
	t.Helper()
	if !sameTasks(got, want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

// The cases below mirror Kafka's StickyTaskAssignorTest.

func TestOneActiveTaskPerProcessWhenTaskCountEqualsProcessCount(t *testing.T) {
	ga := assign(t, map[string]MemberSpec{"member1": member("process1"), "member2": member("process2"), "member3": member("process3")},
		"", subs(3, false, "test-subtopology"))
	for _, m := range []string{"member1", "member2", "member3"} {
		if n := count(ga.Members[m].ActiveTasks); n != 1 {
			t.Fatalf("%s has %d active tasks", m, n)
		}
	}
}

func sixMembersOnThreeProcesses() map[string]MemberSpec {
	return map[string]MemberSpec{
		"member1_1": member("process1"), "member1_2": member("process1"),
		"member2_1": member("process2"), "member2_2": member("process2"),
		"member3_1": member("process3"), "member3_2": member("process3"),
	}
}

func TestEvenlyAcrossClients(t *testing.T) {
	for _, standbys := range []string{"", "1"} {
		ga := assign(t, sixMembersOnThreeProcesses(), standbys, subs(3, standbys != "", "test-subtopology1", "test-subtopology2"))
		for id, a := range ga.Members {
			if n := count(a.ActiveTasks); n != 1 {
				t.Fatalf("standbys %q: %s has %d active tasks", standbys, id, n)
			}
		}
		if standbys != "" {
			for id, a := range ga.Members {
				if n := count(a.StandbyTasks); n != 1 {
					t.Fatalf("%s has %d standby tasks", id, n)
				}
			}
		}
	}
}

func TestNotMigrateActiveTaskToOtherProcess(t *testing.T) {
	ga := assign(t, map[string]MemberSpec{
		"member1": withActive(member("process1"), "test-subtopology", 0),
		"member2": withActive(member("process2"), "test-subtopology", 1),
	}, "", subs(3, false, "test-subtopology"))
	if !contains(ga.Members["member1"].ActiveTasks["test-subtopology"], 0) || !contains(ga.Members["member2"].ActiveTasks["test-subtopology"], 1) {
		t.Fatalf("lost stickiness: %+v", ga.Members)
	}

	ga = assign(t, map[string]MemberSpec{
		"member2": withActive(member("process2"), "test-subtopology", 1),
		"member3": withActive(member("process1"), "test-subtopology", 2),
	}, "", subs(3, false, "test-subtopology"))
	if !contains(ga.Members["member2"].ActiveTasks["test-subtopology"], 1) || !contains(ga.Members["member3"].ActiveTasks["test-subtopology"], 2) {
		t.Fatalf("lost stickiness: %+v", ga.Members)
	}
}

func TestMigrateActiveTasksToNewProcessWithoutChangingAll(t *testing.T) {
	ga := assign(t, map[string]MemberSpec{
		"member1": withActive(member("process1"), "s", 0, 2),
		"member2": withActive(member("process2"), "s", 1),
		"member3": member("process3"),
	}, "", subs(3, false, "s"))
	// The active quota is 1: member1 keeps partition 0 (first in partition
	// order), member2 keeps 1, the new member3 takes 2.
	wantActives(t, ga, map[string]Tasks{
		"member1": {"s": {0}},
		"member2": {"s": {1}},
		"member3": {"s": {2}},
	})
}

func TestAssignBasedOnCapacity(t *testing.T) {
	ga := assign(t, map[string]MemberSpec{"member1": member("process1"), "member2_1": member("process2"), "member2_2": member("process2")},
		"", subs(3, false, "s"))
	for id, a := range ga.Members {
		if n := count(a.ActiveTasks); n != 1 {
			t.Fatalf("%s has %d tasks", id, n)
		}
	}
}

func TestEvenWithUnequalSubtopologySizes(t *testing.T) {
	topo := describer{{ID: "test-subtopology1", NumTasks: 6}, {ID: "test-subtopology2", NumTasks: 1}}
	ga := assign(t, map[string]MemberSpec{
		"member1": {ProcessID: "process1", ActiveTasks: Tasks{"test-subtopology1": {0, 1, 2, 3, 4, 5}, "test-subtopology2": {0}}},
		"member2": member("process2"),
	}, "", topo)
	if a, b := count(ga.Members["member1"].ActiveTasks), count(ga.Members["member2"].ActiveTasks); a != 4 || b != 3 {
		t.Fatalf("counts %d/%d, want 4/3", a, b)
	}
}

func TestActiveStickinessWithMoreClientsThanTasks(t *testing.T) {
	ga := assign(t, map[string]MemberSpec{
		"member1": withActive(member("process1"), "s", 0),
		"member2": withActive(member("process2"), "s", 2),
		"member3": withActive(member("process3"), "s", 1),
		"member4": member("process4"), "member5": member("process5"),
	}, "", subs(3, false, "s"))
	wantActives(t, ga, map[string]Tasks{
		"member1": {"s": {0}},
		"member2": {"s": {2}},
		"member3": {"s": {1}},
		"member4": nil,
	})

	ga = assign(t, map[string]MemberSpec{
		"member1": member("process1"),
		"member2": withActive(member("process2"), "s", 0),
		"member3": member("process3"),
		"member4": withActive(member("process4"), "s", 2),
		"member5": withActive(member("process5"), "s", 1),
	}, "", subs(3, false, "s"))
	wantActives(t, ga, map[string]Tasks{
		"member2": {"s": {0}},
		"member4": {"s": {2}},
		"member5": {"s": {1}},
	})
}

func TestActiveToClientWithPreviousStandby(t *testing.T) {
	ga := assign(t, map[string]MemberSpec{
		"member1": withStandby(member("process1"), "s", 2),
		"member2": withStandby(member("process2"), "s", 1),
		"member3": withStandby(member("process3"), "s", 0),
	}, "", subs(3, false, "s"))
	wantActives(t, ga, map[string]Tasks{
		"member1": {"s": {2}},
		"member2": {"s": {1}},
		"member3": {"s": {0}},
	})
}

func TestStandbyNotOnClientWithTheActive(t *testing.T) {
	ga := assign(t, map[string]MemberSpec{
		"member1": withStandby(member("process1"), "s", 0),
		"member2": withStandby(member("process2"), "s", 1),
	}, "1", subs(2, true, "s"))
	wantTasks(t, "member1 active", ga.Members["member1"].ActiveTasks, Tasks{"s": {0}})
	wantTasks(t, "member1 standby", ga.Members["member1"].StandbyTasks, Tasks{"s": {1}})
	wantTasks(t, "member2 active", ga.Members["member2"].ActiveTasks, Tasks{"s": {1}})
	wantTasks(t, "member2 standby", ga.Members["member2"].StandbyTasks, Tasks{"s": {0}})
}

func TestCapacityWithSeveralPreviousStandbys(t *testing.T) {
	ga := assign(t, map[string]MemberSpec{
		"member1":   {ProcessID: "process1", ActiveTasks: Tasks{"s": {0}}, StandbyTasks: Tasks{"s": {1}}},
		"member2_1": {ProcessID: "process2", ActiveTasks: Tasks{"s": {2}}, StandbyTasks: Tasks{"s": {1}}},
		"member2_2": member("process2"),
	}, "", subs(3, false, "s"))
	wantActives(t, ga, map[string]Tasks{
		"member1":   {"s": {0}},
		"member2_1": {"s": {2}},
		"member2_2": {"s": {1}},
	})
}

func TestStandbyOnOtherClientThanActive(t *testing.T) {
	ms := map[string]MemberSpec{}
	for i, id := range []string{"member1", "member2", "member3", "member4"} {
		ms[id] = withActive(member("process"+id[6:]), "s", int32(i))
	}
	ga := assign(t, ms, "1", subs(4, true, "s"))
	nonEmpty := 0
	for i, id := range []string{"member1", "member2", "member3", "member4"} {
		st := ga.Members[id].StandbyTasks["s"]
		if contains(st, int32(i)) || len(st) > 2 {
			t.Fatalf("%s standbys %v", id, st)
		}
		if len(st) > 0 {
			nonEmpty++
		}
	}
	if nonEmpty < 3 {
		t.Fatalf("standbys on %d members", nonEmpty)
	}
	wantEqual(t, "all standbys", allOf(ga, true, "member1", "member2", "member3", "member4"), map[string][]int32{"s": {0, 1, 2, 3}})
}

func TestMultipleStandbyReplicas(t *testing.T) {
	ga := assign(t, map[string]MemberSpec{
		"member1": withActive(member("process1"), "s", 0),
		"member2": withActive(member("process2"), "s", 1),
		"member3": withActive(member("process3"), "s", 2),
	}, "2", subs(3, true, "s"))
	wantTasks(t, "member1", ga.Members["member1"].StandbyTasks, Tasks{"s": {1, 2}})
	wantTasks(t, "member2", ga.Members["member2"].StandbyTasks, Tasks{"s": {0, 2}})
	wantTasks(t, "member3", ga.Members["member3"].StandbyTasks, Tasks{"s": {0, 1}})
}

func TestNoStandbyWithoutAnotherProcess(t *testing.T) {
	ga := assign(t, map[string]MemberSpec{"member1": member("process1")}, "1", subs(1, true, "s"))
	if n := count(ga.Members["member1"].StandbyTasks); n != 0 {
		t.Fatalf("standbys on the only process: %d", n)
	}
	// Two members of one process: still no standby.
	ga = assign(t, map[string]MemberSpec{"a": member("p"), "b": member("p")}, "1", subs(4, true, "s"))
	if n := count(ga.Members["a"].StandbyTasks) + count(ga.Members["b"].StandbyTasks); n != 0 {
		t.Fatalf("standbys on the only process: %d", n)
	}
}

func TestActiveAndStandby(t *testing.T) {
	ga := assign(t, map[string]MemberSpec{"member1": member("process1"), "member2": member("process2"), "member3": member("process3")},
		"1", subs(3, true, "s"))
	wantEqual(t, "actives", allOf(ga, false, "member1", "member2", "member3"), map[string][]int32{"s": {0, 1, 2}})
	wantEqual(t, "standbys", allOf(ga, true, "member1", "member2", "member3"), map[string][]int32{"s": {0, 1, 2}})
}

func TestAtLeastOneTaskPerProcessIfPossible(t *testing.T) {
	ga := assign(t, map[string]MemberSpec{
		"member1_1": member("process1"), "member1_2": member("process1"), "member1_3": member("process1"),
		"member2": member("process2"), "member3": member("process3"),
	}, "", subs(3, false, "s"))
	if n := len(allOf(ga, false, "member1_1", "member1_2", "member1_3")["s"]); n != 1 {
		t.Fatalf("process1 has %d tasks", n)
	}
	if count(ga.Members["member2"].ActiveTasks) != 1 || count(ga.Members["member3"].ActiveTasks) != 1 {
		t.Fatalf("%+v", ga.Members)
	}
}

// More replicas than other processes: each task gets one standby per other
// process and no more.
func TestMoreStandbysThanProcesses(t *testing.T) {
	ga := assign(t, map[string]MemberSpec{"a": member("p1"), "b": member("p2"), "c": member("p3"), "d": member("p3")},
		"1000", subs(4, true, "s"))
	all := 0
	for _, a := range ga.Members {
		all += count(a.StandbyTasks)
	}
	if all != 4*2 {
		t.Fatalf("%d standbys, want 8 (two other processes per task)", all)
	}
	if _, err := (StickyTaskAssignor{}).Assign(GroupSpec{Members: map[string]MemberSpec{"a": {}},
		Configs: map[string]string{ConfigNumStandbyReplicas: "3000000000"}}, subs(1, true, "s")); err == nil {
		t.Fatal("a standby count beyond int32 must fail, as Integer.parseInt does")
	}
}

func TestStatelessGetsNoStandby(t *testing.T) {
	topo := describer{{ID: "stateless", NumTasks: 4}, {ID: "stateful", NumTasks: 2, Stateful: true}}
	ga := assign(t, map[string]MemberSpec{"a": member("p1"), "b": member("p2")}, "1", topo)
	st := allOf(ga, true, "a", "b")
	wantEqual(t, "standbys", st, map[string][]int32{"stateful": {0, 1}})
}

// Kafka 4.4 ranks standby candidates: previous standbys before members that
// only reported offsets, the most caught-up first.
func TestStandbyCandidateRanking(t *testing.T) {
	topo := subs(1, true, "s")
	// Three processes; the task was active on a member that left. Both
	// remaining candidates are equally loaded, so the ranking decides.
	ga := assign(t, map[string]MemberSpec{
		"a": {ProcessID: "p1", TaskOffsets: map[string]map[int32]int64{"s": {0: 900}}},
		"b": {ProcessID: "p2", StandbyTasks: Tasks{"s": {0}}, TaskOffsets: map[string]map[int32]int64{"s": {0: 10}}},
	}, "", topo)
	wantTasks(t, "previous standby wins", ga.Members["b"].ActiveTasks, Tasks{"s": {0}})

	ga = assign(t, map[string]MemberSpec{
		"a": {ProcessID: "p1", TaskOffsets: map[string]map[int32]int64{"s": {0: 10}}},
		"b": {ProcessID: "p2", TaskOffsets: map[string]map[int32]int64{"s": {0: 900}}},
		"c": {ProcessID: "p3"},
	}, "", topo)
	wantTasks(t, "most caught-up wins", ga.Members["b"].ActiveTasks, Tasks{"s": {0}})

	ga = assign(t, map[string]MemberSpec{
		"a": {ProcessID: "p1", StandbyTasks: Tasks{"s": {0}}, TaskOffsets: map[string]map[int32]int64{"s": {0: 5}}},
		"b": {ProcessID: "p2", StandbyTasks: Tasks{"s": {0}}, TaskOffsets: map[string]map[int32]int64{"s": {0: 50}}},
	}, "", topo)
	wantTasks(t, "caught-up standby wins", ga.Members["b"].ActiveTasks, Tasks{"s": {0}})
}

// A later candidate replaces an earlier one only with both a lower process
// load and a lower member load.
func TestPreviousStandbyLeastLoad(t *testing.T) {
	topo := describer{{ID: "s", NumTasks: 4}}
	ga := assign(t, map[string]MemberSpec{
		// a keeps 0 and 1 (quota 2); c is idle and also held 2 as standby.
		"a": {ProcessID: "p1", ActiveTasks: Tasks{"s": {0, 1}}, StandbyTasks: Tasks{"s": {2}}},
		"c": {ProcessID: "p2", StandbyTasks: Tasks{"s": {2}}},
	}, "", topo)
	wantActives(t, ga, map[string]Tasks{
		"a": {"s": {0, 1}},
		"c": {"s": {2, 3}},
	})
}

func TestDeterministicTies(t *testing.T) {
	ms := map[string]MemberSpec{}
	for _, id := range []string{"m3", "m1", "m2", "m0"} {
		ms[id] = member("p-" + id)
	}
	first := assign(t, ms, "1", subs(3, true, "a", "b"))
	for range 20 {
		if again := assign(t, ms, "1", subs(3, true, "a", "b")); !reflect.DeepEqual(first, again) {
			t.Fatal("assignment differs between runs")
		}
	}
	// Ties go by process id: in (subtopology, partition) order a_0..a_2,
	// b_0 go round p-m0..p-m3, and b_1 comes back to p-m0.
	wantTasks(t, "m0", first.Members["m0"].ActiveTasks, Tasks{"a": {0}, "b": {1}})
}

func TestEdgeCases(t *testing.T) {
	ga, err := StickyTaskAssignor{}.Assign(GroupSpec{}, subs(0, true, "s"))
	if err != nil || len(ga.Members) != 0 {
		t.Fatalf("empty group: %v %v", ga, err)
	}
	if _, err := (StickyTaskAssignor{}).Assign(GroupSpec{}, subs(2, false, "s")); err == nil {
		t.Fatal("tasks without members must fail")
	}
	if _, err := (StickyTaskAssignor{}).Assign(GroupSpec{Members: map[string]MemberSpec{"a": {}},
		Configs: map[string]string{ConfigNumStandbyReplicas: "x"}}, subs(2, false, "s")); err == nil {
		t.Fatal("bad standby config must fail")
	}
	// Previous tasks of unknown subtopologies or partitions are ignored.
	ga = assign(t, map[string]MemberSpec{
		"a": {ProcessID: "p", ActiveTasks: Tasks{"gone": {0}, "s": {7, -1}}, StandbyTasks: Tasks{"s": {9}}},
	}, "", subs(2, false, "s"))
	wantTasks(t, "a", ga.Members["a"].ActiveTasks, Tasks{"s": {0, 1}})
	// A not-ready topology describes nothing: everyone gets empty targets.
	ga = assign(t, map[string]MemberSpec{"a": member("p")}, "1", nil)
	if len(ga.Members) != 1 || count(ga.Members["a"].ActiveTasks) != 0 {
		t.Fatalf("%+v", ga)
	}
}

func wantEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s\n got %v\nwant %v", what, got, want)
	}
}

func contains(s []int32, v int32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
