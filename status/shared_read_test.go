package status

import (
	"context"
	"fmt"
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
	s.reads.share = time.Hour // the window does not pass during the test
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
	s.reads.mu.Lock()
	s.reads.share = 0 // the window passed
	s.reads.mu.Unlock()
	get(t, h, "/api/groups")
	if n := up.describes.Load(); n != 2 {
		t.Fatalf("%d DescribeGroups asked after the window, want 2", n)
	}
}

// TestReadOfOneGroupShared: /api/groups/{id} calls for one group within the
// window cost the upstream one read of it; another group is read apart; a
// script asking for more ids at once than maxSharedReads gets 503 for the
// rest, and once the window passed the kept reads make room again.
func TestReadOfOneGroupShared(t *testing.T) {
	ev := NewEvents(nil)
	c := newCoordinator(t, ev)
	for _, g := range []string{"app", "other"} {
		c.ObserveClassic(g, coordinator.ClassicObservation{Member: "m", Generation: 1, HaveGeneration: true, At: time.Now()})
	}
	up := &countingUpstream{}
	s := New(Options{Coordinator: c, Events: ev, Upstream: up})
	s.reads.share = time.Hour
	h := s.Handler()
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// 404: the fake upstream's groups are not Kafka Streams
			// groups; what counts is what the upstream was asked.
			get(t, h, "/api/groups/app")
		}()
	}
	wg.Wait()
	if n := up.describes.Load(); n != 1 {
		t.Fatalf("%d DescribeGroups asked for 6 reads of one group within the window, want 1", n)
	}
	get(t, h, "/api/groups/other")
	if n := up.describes.Load(); n != 2 {
		t.Fatalf("%d DescribeGroups asked after a second group's read, want 2", n)
	}
	for i := range maxSharedReads {
		get(t, h, fmt.Sprintf("/api/groups/unknown-%d", i))
	}
	if code, _ := get(t, h, "/api/groups/one-too-many"); code != http.StatusServiceUnavailable {
		t.Fatalf("a read past %d kept ids: %d, want 503", maxSharedReads, code)
	}
	s.reads.mu.Lock()
	s.reads.share = 0 // every kept read's window passed
	s.reads.mu.Unlock()
	if code, _ := get(t, h, "/api/groups/app"); code == http.StatusServiceUnavailable {
		t.Fatal("/api/groups/app after the window: 503, want its reads forgotten")
	}
	s.reads.mu.Lock()
	kept := len(s.reads.byID)
	s.reads.mu.Unlock()
	if kept > 1 {
		t.Fatalf("%d reads kept after every window passed, want the last one only", kept)
	}
}
