package status

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
)

// countingUpstream describes every group as an empty classic group and
// counts the DescribeGroups asked.
type countingUpstream struct{ describes atomic.Int32 }

func (u *countingUpstream) DescribeClassic(_ context.Context, ids []string) ([]kmsg.DescribeGroupsResponseGroup, error) {
	u.describes.Add(1)
	var out []kmsg.DescribeGroupsResponseGroup
	for _, id := range ids {
		d := kmsg.NewDescribeGroupsResponseGroup()
		d.Group, d.State, d.ProtocolType = id, "Empty", "consumer"
		out = append(out, d)
	}
	return out, nil
}

func (u *countingUpstream) Committed(context.Context, string) (map[string]map[int32]int64, error) {
	return nil, nil
}

// TestReadOfEveryGroupShared: page loads and /api/groups calls within the
// share window, one after another or at once, cost the upstream one
// DescribeGroups of the observed classic groups; after the window, the
// next asks again.
func TestReadOfEveryGroupShared(t *testing.T) {
	ev := NewEvents(nil)
	c := newCoordinator(t, ev)
	c.ObserveClassic("app", coordinator.ClassicObservation{Member: "m", Generation: 1, HaveGeneration: true, At: time.Now()})
	up := &countingUpstream{}
	s := New(Options{Coordinator: c, Events: ev, Upstream: up})
	s.readShare = time.Hour // the window does not pass during the test
	h := s.Handler()
	for _, p := range []string{"/api/groups", "/ui", "/api/groups"} {
		if code, body := get(t, h, p); code != http.StatusOK {
			t.Fatalf("%s: %d %s", p, code, body)
		}
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			get(t, h, "/ui")
		}()
	}
	wg.Wait()
	if n := up.describes.Load(); n != 1 {
		t.Fatalf("%d DescribeGroups asked for 11 reads within the window, want 1", n)
	}
	s.all.mu.Lock()
	s.readShare = 0 // the window passed
	s.all.mu.Unlock()
	get(t, h, "/api/groups")
	if n := up.describes.Load(); n != 2 {
		t.Fatalf("%d DescribeGroups asked after the window, want 2", n)
	}
}
