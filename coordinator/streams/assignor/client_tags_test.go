package assignor

import (
	"fmt"
	"testing"
)

// Six processes over three zones (two per zone): every standby lands in
// another zone than its active (and, with two standbys, than each other).
func TestRackAwareStandbysSpreadOverZones(t *testing.T) {
	for _, standbys := range []string{"1", "2"} {
		members := map[string]MemberSpec{}
		zone := map[string]string{}
		for i := range 6 {
			id := fmt.Sprintf("m%d", i)
			ms := member(fmt.Sprintf("p%d", i))
			// Zones a, a, b, b, c, c: the tag-blind assignment puts
			// standbys on the neighbouring process, often in the same zone.
			zone[id] = string(rune('a' + i/2))
			ms.ClientTags = map[string]string{"zone": zone[id], "rack": id}
			members[id] = ms
		}
		spec := GroupSpec{Members: members, Configs: map[string]string{
			ConfigNumStandbyReplicas: standbys, ConfigRackAwareAssignmentTags: "zone",
		}}
		topo := subs(12, true, "0")
		ga, err := StickyTaskAssignor{}.Assign(spec, topo)
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, spec, topo, ga)
		for p := int32(0); p < 12; p++ {
			zones := map[string]int{}
			for id, a := range ga.Members {
				if contains(a.ActiveTasks["0"], p) || contains(a.StandbyTasks["0"], p) {
					zones[zone[id]]++
				}
			}
			for z, n := range zones {
				if n > 1 {
					t.Fatalf("standbys=%s: task 0_%d has %d replicas in zone %s: %+v", standbys, p, n, z, ga.Members)
				}
			}
		}
		// Deterministic.
		again, _ := StickyTaskAssignor{}.Assign(spec, topo)
		if fmt.Sprint(again) != fmt.Sprint(ga) {
			t.Fatal("rack-aware assignment not deterministic")
		}
	}
}

// More replicas than zones: the key is used up and no replica is dropped.
func TestRackAwareStandbysMoreReplicasThanZones(t *testing.T) {
	members := map[string]MemberSpec{}
	for i := range 4 {
		ms := member(fmt.Sprintf("p%d", i))
		ms.ClientTags = map[string]string{"zone": string(rune('a' + i%2))}
		members[fmt.Sprintf("m%d", i)] = ms
	}
	spec := GroupSpec{Members: members, Configs: map[string]string{ConfigNumStandbyReplicas: "2", ConfigRackAwareAssignmentTags: "zone"}}
	topo := subs(4, true, "0")
	ga, err := StickyTaskAssignor{}.Assign(spec, topo)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, spec, topo, ga)
	n := 0
	for _, a := range ga.Members {
		n += count(a.StandbyTasks)
	}
	if n != 8 {
		t.Fatalf("%d standbys, want 8: %+v", n, ga.Members)
	}
}
