package cluster

import (
	"testing"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/upstream"
)

// TestRoutingFollowsTheMap: Owner and Hops, which route every group
// request, answer from the latest map the instance group stored: not
// joined they route nothing; once a new map moves a group's partition
// (or adds an instance of an earlier release, without an internal
// address) the next request follows it, with the new map's generation.
func TestRoutingFollowsTheMap(t *testing.T) {
	t.Parallel()
	const n = 4
	cr := &Runtime{parts: coordinator.NewPartitions(nil, n), self: upstream.InstanceInfo{ProxyID: "a"}}
	group := "word-count"
	p := coordinator.PartitionFor(group, n)

	if _, _, _, ok := cr.Owner(group); ok || cr.Hops() {
		t.Fatalf("not joined: Owner ok %v, Hops %v; want neither", ok, cr.Hops())
	}

	instances := map[string]upstream.InstanceInfo{
		"a": {ProxyID: "a", Internal: "a:1"}, "b": {ProxyID: "b", Internal: "b:1"},
	}
	owners := func(owner string) []string {
		o := make([]string, n)
		o[p] = owner
		return o
	}
	cur := upstream.ClusterMap{Owners: owners("a"), Instances: instances, Generation: 3}
	current := func() upstream.ClusterMap { return cur }
	cr.refreshRouting(current)
	if self, peer, gen, ok := cr.Owner(group); !ok || !self || peer != "" || gen != 3 {
		t.Errorf("owned here: Owner = %v %q %d %v, want self at generation 3", self, peer, gen, ok)
	}
	if !cr.Hops() {
		t.Error("every instance has an internal address: Hops false")
	}

	// The partition moves to b; an instance of an earlier release joins.
	cur = upstream.ClusterMap{Owners: owners("b"), Instances: map[string]upstream.InstanceInfo{
		"a": instances["a"], "b": instances["b"], "old": {ProxyID: "old"},
	}, Generation: 4}
	cr.refreshRouting(current)
	if self, peer, gen, ok := cr.Owner(group); !ok || self || peer != "b" || gen != 4 {
		t.Errorf("moved to b: Owner = %v %q %d %v, want b at generation 4", self, peer, gen, ok)
	}
	if cr.Hops() {
		t.Error("an instance without an internal address: Hops true")
	}

	// The partition moves (no owner yet), or its owner is not in the map.
	for _, owner := range []string{"", "gone"} {
		cur = upstream.ClusterMap{Owners: owners(owner), Instances: instances, Generation: 5}
		cr.refreshRouting(current)
		if _, _, gen, ok := cr.Owner(group); ok || gen != 5 {
			t.Errorf("owner %q: Owner ok %v at generation %d, want no owner at generation 5", owner, ok, gen)
		}
	}
}
