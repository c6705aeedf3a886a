package status

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/streamshift/streamshift/coordinator"
)

// ownerMap is a cluster as cmd/streamshift's runtime reports it: an owner
// map that a test changes as an instance-group rebalance would.
type ownerMap struct {
	mu      sync.Mutex
	self    Instance
	leaving bool
	inst    map[string]Instance
	owners  []string
	local   map[int32]string
}

func (m *ownerMap) View() ClusterView {
	m.mu.Lock()
	defer m.mu.Unlock()
	return NewClusterView("_streamshift-groups", m.self, m.leaving, m.inst, m.owners, m.local)
}

func (m *ownerMap) PartitionOf(group string) int32 {
	return coordinator.PartitionFor(group, int32(len(m.owners)))
}

// TestStatusPageCluster: with several instances the page lists them (proxy
// id, advertised host, this one, alive or leaving, their log partitions),
// every group-log partition's owner (moving while it has none), each
// served group's owner, and answers ?group= with the instance serving any
// group; /api/groups carries the owner; the page follows a new owner map.
func TestStatusPageCluster(t *testing.T) {
	ev := NewEvents(NewMetrics(prometheus.NewRegistry()))
	c := newCoordinator(t, ev)

	const parts = 6
	pApp := coordinator.PartitionFor("app", parts)
	// Another group, of a partition another instance owns.
	other, pOther := "", int32(0)
	for _, g := range []string{"g1", "g2", "g3", "g4", "g5", "g6", "g7", "g8"} {
		if p := coordinator.PartitionFor(g, parts); p != pApp {
			other, pOther = g, p
			break
		}
	}
	owners := []string{"s2", "s2", "s3", "s3", "s2", "s3"}
	owners[pApp], owners[pOther] = "s1", "s2"
	cl := &ownerMap{
		self: Instance{ProxyID: "s1", Host: "10.0.0.1", Version: "v1"},
		inst: map[string]Instance{
			"s1": {Host: "10.0.0.1", Version: "v1"}, "s2": {Host: "10.0.0.2", Version: "v1"}, "s3": {Host: "10.0.0.3"},
		},
		owners: owners,
		local:  map[int32]string{pApp: "loaded"},
	}
	h := New(Options{Coordinator: c, Events: ev, Cluster: cl}).Handler()
	join(t, c, "app", "m1")

	code, page := get(t, h, "/ui?group="+other)
	for _, want := range []string{
		`id="cluster" data-self="s1"`,
		`data-instance="s1" data-host="10.0.0.1" data-state="alive"`, "s1 (this instance)",
		`data-instance="s2" data-host="10.0.0.2" data-state="alive"`,
		`data-instance="s3" data-host="10.0.0.3" data-state="alive"`,
		`data-partition="` + itoa(pApp) + `" data-owner="s1"`, `data-partition="` + itoa(pOther) + `" data-owner="s2"`, "s1 · loaded</span>",
		`data-group="app" data-served="true"`, `class="owner" data-owner="s1"`,
		`class="found" data-group="` + other + `" data-partition="` + itoa(pOther) + `" data-owner="s2"`, "(10.0.0.2)",
		`href="/cluster"`, "_streamshift-groups",
	} {
		if code != http.StatusOK || !strings.Contains(page, want) {
			t.Errorf("/ui lacks %s", want)
		}
	}
	if strings.Contains(page, "src=") || strings.Contains(page, `href="http`) {
		t.Error("the page must not fetch anything from elsewhere")
	}

	_, body := get(t, h, "/api/groups/app")
	var g Group
	if err := json.Unmarshal([]byte(body), &g); err != nil {
		t.Fatal(err)
	}
	if want := (GroupOwner{Partition: pApp, Owner: "s1", Host: "10.0.0.1", Self: true}); g.Owner == nil || *g.Owner != want {
		t.Fatalf("/api/groups/app owner %+v, want %+v", g.Owner, want)
	}

	// s2 dies: its partitions move (no owner until the next rebalance),
	// then s3 takes them; s1 starts its graceful stop.
	cl.mu.Lock()
	delete(cl.inst, "s2")
	for p, o := range cl.owners {
		if o == "s2" {
			cl.owners[p] = ""
		}
	}
	cl.mu.Unlock()
	_, page = get(t, h, "/ui?group="+other)
	for _, want := range []string{`data-partition="` + itoa(pOther) + `" data-owner=""`, `data-owner="">→ log partition ` + itoa(pOther) + `, <span class="moving">moving`} {
		if !strings.Contains(page, want) {
			t.Errorf("/ui while s2's partitions move lacks %s", want)
		}
	}
	if strings.Contains(page, `data-instance="s2"`) {
		t.Error("/ui still lists the dead s2")
	}
	cl.mu.Lock()
	for p, o := range cl.owners {
		if o == "" {
			cl.owners[p] = "s3"
		}
	}
	cl.leaving = true
	cl.mu.Unlock()
	_, page = get(t, h, "/ui?group="+other)
	for _, want := range []string{`class="found" data-group="` + other + `" data-partition="` + itoa(pOther) + `" data-owner="s3"`,
		`data-instance="s1" data-host="10.0.0.1" data-state="leaving"`} {
		if !strings.Contains(page, want) {
			t.Errorf("/ui after s3 took s2's partitions lacks %s", want)
		}
	}
}

// TestNewClusterView: each instance's partitions come from the owner map;
// this instance is listed (joining) before its first rebalance.
func TestNewClusterView(t *testing.T) {
	v := NewClusterView("log", Instance{ProxyID: "b", Host: "hb"}, false,
		map[string]Instance{"c": {Host: "hc"}, "a": {Host: "ha"}}, []string{"a", "", "c", "a"}, map[int32]string{1: "loading"})
	want := ClusterView{Topic: "log", Self: "b",
		Instances: []Instance{
			{ProxyID: "a", Host: "ha", State: InstanceAlive, Owned: []int32{0, 3}},
			{ProxyID: "b", Host: "hb", Self: true, State: InstanceJoining, Owned: []int32{}},
			{ProxyID: "c", Host: "hc", State: InstanceAlive, Owned: []int32{2}},
		},
		Partitions: []LogPartition{{0, "a", ""}, {1, "", "loading"}, {2, "c", ""}, {3, "a", ""}},
	}
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("view\n %+v\nwant %+v", v, want)
	}
	if in, ok := v.Owner(2); !ok || in.Host != "hc" {
		t.Fatalf("owner of 2: %+v %v", in, ok)
	}
	if _, ok := v.Owner(1); ok {
		t.Fatal("a moving partition has no owner")
	}
	if _, ok := v.Owner(9); ok {
		t.Fatal("no partition 9")
	}
}
