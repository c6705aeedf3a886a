package upstream

import (
	"reflect"
	"strings"
	"testing"
)

func counts(out map[string]ClusterMap) map[string]int {
	c := map[string]int{}
	for id, m := range out {
		c[id] = len(m.Mine)
	}
	return c
}

// A first balance spreads evenly; every member gets the same map.
func TestBalanceInstancesEven(t *testing.T) {
	out := balanceInstances([]instanceMember{
		{"m1", InstanceInfo{ProxyID: "a", Host: "h1"}},
		{"m2", InstanceInfo{ProxyID: "b", Host: "h2"}},
		{"m3", InstanceInfo{ProxyID: "c", Host: "h3"}},
	}, 8)
	if c := counts(out); c["m1"] != 3 || c["m2"] != 3 || c["m3"] != 2 {
		t.Fatalf("counts %v", c)
	}
	for _, m := range out {
		if !reflect.DeepEqual(m.Owners, out["m1"].Owners) || len(m.Instances) != 3 {
			t.Fatalf("maps differ: %+v vs %+v", m, out["m1"])
		}
		for _, p := range m.Mine {
			if m.Owners[p] == "" {
				t.Fatalf("partition %d of a member unowned in the map", p)
			}
		}
	}
}

// A joining member takes partitions only from those above quota, and only
// in the next round (cooperative): the first round leaves them unowned.
func TestBalanceInstancesStickyCooperative(t *testing.T) {
	a := InstanceInfo{ProxyID: "a", Host: "h1", Owned: []int32{0, 1, 2, 3, 4, 5}, Generation: 1}
	b := InstanceInfo{ProxyID: "b", Host: "h2", Owned: []int32{6, 7, 8, 9, 10, 11}, Generation: 1}
	c := InstanceInfo{ProxyID: "c", Host: "h3"}
	out := balanceInstances([]instanceMember{{"m1", a}, {"m2", b}, {"m3", c}}, 12)
	if got := out["m1"].Mine; !reflect.DeepEqual(got, []int32{0, 1, 2, 3}) {
		t.Fatalf("a keeps %v", got)
	}
	if got := out["m2"].Mine; !reflect.DeepEqual(got, []int32{6, 7, 8, 9}) {
		t.Fatalf("b keeps %v", got)
	}
	if got := out["m3"].Mine; len(got) != 0 {
		t.Fatalf("c got %v while their owners still hold them", got)
	}
	for _, p := range []int32{4, 5, 10, 11} {
		if o := out["m1"].Owners[p]; o != "" {
			t.Fatalf("moving partition %d owned by %q", p, o)
		}
	}
	// The owners gave them up and rejoined.
	a.Owned, b.Owned = out["m1"].Mine, out["m2"].Mine
	out = balanceInstances([]instanceMember{{"m1", a}, {"m2", b}, {"m3", c}}, 12)
	if got := out["m3"].Mine; !reflect.DeepEqual(got, []int32{4, 5, 10, 11}) {
		t.Fatalf("c gets %v", got)
	}
	if !reflect.DeepEqual(out["m1"].Mine, a.Owned) || !reflect.DeepEqual(out["m2"].Mine, b.Owned) {
		t.Fatalf("a or b moved: %v %v", out["m1"].Mine, out["m2"].Mine)
	}
}

// A dead member's partitions (nobody reports them) go at once; of two
// claims of one partition (a zombie's) the newer generation keeps it.
func TestBalanceInstancesDeadAndZombie(t *testing.T) {
	out := balanceInstances([]instanceMember{
		{"m1", InstanceInfo{ProxyID: "a", Host: "h1", Owned: []int32{0, 1}, Generation: 5}},
		{"m2", InstanceInfo{ProxyID: "b", Host: "h2", Owned: []int32{1, 2}, Generation: 3}},
	}, 4)
	if got := out["m1"].Mine; !reflect.DeepEqual(got, []int32{0, 1}) {
		t.Fatalf("a %v", got)
	}
	if got := out["m2"].Mine; !reflect.DeepEqual(got, []int32{2, 3}) {
		t.Fatalf("b %v", got)
	}
}

// Duplicate proxy ids or advertised hosts get an error, not partitions;
// the one already holding partitions keeps them.
func TestBalanceInstancesDuplicates(t *testing.T) {
	out := balanceInstances([]instanceMember{
		{"m2", InstanceInfo{ProxyID: "a", Host: "h9"}},
		{"m1", InstanceInfo{ProxyID: "a", Host: "h1", Owned: []int32{0}}},
		{"m3", InstanceInfo{ProxyID: "c", Host: "h1"}},
	}, 2)
	if out["m1"].Error != "" || len(out["m1"].Mine) != 2 {
		t.Fatalf("holder: %+v", out["m1"])
	}
	if e := out["m2"].Error; !strings.Contains(e, `proxy-id "a"`) || len(out["m2"].Mine) != 0 {
		t.Fatalf("duplicate id: %+v", out["m2"])
	}
	if e := out["m3"].Error; !strings.Contains(e, `advertised host "h1"`) {
		t.Fatalf("duplicate host: %+v", out["m3"])
	}
}

// Once every member has an internal address (requests hop to the owner),
// the instances may share one advertised host (a load balancer's), but not
// an internal address; a member without one keeps the earlier rule for
// all (a mixed release during an upgrade). Each map is newer than the
// generation its members' partitions were of.
func TestBalanceInstancesSharedHost(t *testing.T) {
	out := balanceInstances([]instanceMember{
		{"m1", InstanceInfo{ProxyID: "a", Host: "lb", Internal: "a:19091", Owned: []int32{0}, Generation: 4}},
		{"m2", InstanceInfo{ProxyID: "b", Host: "lb", Internal: "b:19091", Generation: 4}},
		{"m3", InstanceInfo{ProxyID: "c", Host: "lb", Internal: "a:19091"}},
	}, 4)
	if out["m1"].Error != "" || out["m2"].Error != "" || len(out["m1"].Mine)+len(out["m2"].Mine) != 4 {
		t.Fatalf("a shared advertised host refused: %+v %+v", out["m1"], out["m2"])
	}
	if e := out["m3"].Error; !strings.Contains(e, `cluster.advertised-address "a:19091"`) {
		t.Fatalf("duplicate internal address: %+v", out["m3"])
	}
	if g := out["m1"].Generation; g != 5 {
		t.Fatalf("map generation %d, want 5", g)
	}
	out = balanceInstances([]instanceMember{
		{"m1", InstanceInfo{ProxyID: "a", Host: "lb", Internal: "a:19091", Owned: []int32{0}}},
		{"m2", InstanceInfo{ProxyID: "b", Host: "lb"}},
	}, 2)
	if e := out["m2"].Error; !strings.Contains(e, `advertised host "lb"`) {
		t.Fatalf("a shared host with an earlier release: %+v", out["m2"])
	}
}

// Every map carries each instance's served versions, and the versions all
// instances advertise are, per key, the lowest an instance intercepting it
// serves: an instance of an earlier release (no versions, or a key it does
// not intercept) does not bound a key.
func TestClusterMapServedVersions(t *testing.T) {
	out := balanceInstances([]instanceMember{
		{"m1", InstanceInfo{ProxyID: "a", Host: "lb", Internal: "a:19091", Served: map[int16]int16{88: 1, 8: 9, 11: 9}}},
		{"m2", InstanceInfo{ProxyID: "b", Host: "lb", Internal: "b:19091", Served: map[int16]int16{88: 0, 8: 9}}},
		{"m3", InstanceInfo{ProxyID: "c", Host: "lb", Internal: "c:19091"}},
	}, 4)
	for id, m := range out {
		if got := m.Instances["b"].Served; !reflect.DeepEqual(got, map[int16]int16{88: 0, 8: 9}) {
			t.Fatalf("%s's map: b serves %v", id, got)
		}
		if got, want := m.ServedVersions(), map[int16]int16{88: 0, 8: 9, 11: 9}; !reflect.DeepEqual(got, want) {
			t.Fatalf("%s's map: served versions %v, want %v", id, got, want)
		}
	}
}
