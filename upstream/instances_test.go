package upstream

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// fakeInstance records what its instance group tells it.
type fakeInstance struct {
	mu    sync.Mutex
	owned map[int32]bool
	fatal error
	g     *InstanceGroup
}

func (f *fakeInstance) partitions() []int32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int32
	for p := range f.owned {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// instanceOpts are extra kgo options of the instance groups under test.
var instanceOpts []kgo.Opt

func joinFake(t *testing.T, seeds []string, id string, partitions int32) *fakeInstance {
	t.Helper()
	f := &fakeInstance{owned: map[int32]bool{}}
	g, err := JoinInstanceGroup(InstanceGroupOptions{
		Seeds: seeds, Opts: instanceOpts, Group: "__streamshift_cluster_test", Topic: "__streamshift_groups", Partitions: partitions,
		Self:           InstanceInfo{ProxyID: id, Host: "host-" + id},
		SessionTimeout: 6 * time.Second,
		Assigned: func(ps []int32) {
			f.mu.Lock()
			defer f.mu.Unlock()
			for _, p := range ps {
				if f.owned[p] {
					t.Errorf("%s: partition %d assigned twice", id, p)
				}
				f.owned[p] = true
			}
		},
		Revoked: func(ps []int32) {
			f.mu.Lock()
			defer f.mu.Unlock()
			for _, p := range ps {
				delete(f.owned, p)
			}
		},
		Fatal: func(err error) {
			f.mu.Lock()
			f.fatal = err
			f.mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.g = g
	return f
}

// settled waits until the instances together own every partition once, each
// the count wanted, and every instance's map says the same.
func settled(t *testing.T, ctx context.Context, partitions int32, want map[*fakeInstance]int) {
	t.Helper()
	for {
		ok := true
		owner := map[int32]*fakeInstance{}
		for f, n := range want {
			ps := f.partitions()
			if len(ps) != n {
				ok = false
			}
			for _, p := range ps {
				if owner[p] != nil {
					t.Fatalf("partition %d owned by two instances", p)
				}
				owner[p] = f
			}
		}
		if ok && int32(len(owner)) == partitions {
			for f := range want {
				m := f.g.Map()
				for p, o := range owner {
					if m.Owners[p] != o.g.Self().ProxyID {
						ok = false
					}
				}
			}
		}
		if ok && int32(len(owner)) == partitions {
			return
		}
		select {
		case <-ctx.Done():
			s := ""
			for f := range want {
				s += fmt.Sprintf(" %s=%v map=%v", f.g.Self().ProxyID, f.partitions(), f.g.Map().Owners)
			}
			t.Fatalf("not settled:%s", s)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Three instances share 12 partitions 4/4/4; one leaving hands its four
// over (the others keep theirs: 6/6); it coming back takes four again.
func TestInstanceGroupSpreadAndMoves(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(12, "__streamshift_groups"))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	testInstanceGroup(t, cluster.ListenAddrs())
}

// testInstanceGroup is TestInstanceGroupSpreadAndMoves on the cluster of
// seeds, whose topic __streamshift_groups has 12 partitions.
func testInstanceGroup(t *testing.T, seeds []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	a, b, c := joinFake(t, seeds, "a", 12), joinFake(t, seeds, "b", 12), joinFake(t, seeds, "c", 12)
	defer a.g.Close()
	defer b.g.Close()
	settled(t, ctx, 12, map[*fakeInstance]int{a: 4, b: 4, c: 4})
	aBefore, bBefore := a.partitions(), b.partitions()

	if err := c.g.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if ps := c.partitions(); len(ps) != 0 {
		t.Fatalf("c still holds %v after leaving", ps)
	}
	settled(t, ctx, 12, map[*fakeInstance]int{a: 6, b: 6})
	for _, p := range aBefore {
		if !contains(a.partitions(), p) {
			t.Fatalf("a lost partition %d it held (%v → %v)", p, aBefore, a.partitions())
		}
	}
	for _, p := range bBefore {
		if !contains(b.partitions(), p) {
			t.Fatalf("b lost partition %d it held (%v → %v)", p, bBefore, b.partitions())
		}
	}
	c = joinFake(t, seeds, "c", 12)
	defer c.g.Close()
	settled(t, ctx, 12, map[*fakeInstance]int{a: 4, b: 4, c: 4})
	if m := c.g.Map(); !reflect.DeepEqual(m.Owners, a.g.Map().Owners) || len(m.Instances) != 3 {
		t.Fatalf("maps differ: %+v vs %+v", m, a.g.Map())
	}
}

func contains(ps []int32, p int32) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}
