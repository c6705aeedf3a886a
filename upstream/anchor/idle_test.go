package anchor

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// idleGroups is how many idle anchors the goroutine test runs.
const idleGroups = 2000

// An idle anchor costs no goroutine: the goroutines of a manager with
// 2,000 synced anchors heartbeating do not grow with the anchors (a fixed
// scheduler, and a short task per heartbeat or join in flight).
func TestIdleAnchorsHoldNoGoroutine(t *testing.T) {
	cl, _ := newCluster(t)
	m, err := New(Options{Client: cl, InstanceID: "streamshift-p1", HeartbeatInterval: time.Second, MaxInflight: 16, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m.Ensure("warm", []string{"a"})
	if _, err := m.Generation(ctx, "warm"); err != nil {
		t.Fatal(err)
	}
	before, heapBefore := goroutinesAndHeap()
	for i := range idleGroups {
		m.Ensure(fmt.Sprintf("g%05d", i), []string{"a", "b"})
	}
	for i := range idleGroups {
		if _, err := m.Generation(ctx, fmt.Sprintf("g%05d", i)); err != nil {
			t.Fatal(err)
		}
	}
	// Several heartbeat intervals: every anchor is idle between its
	// heartbeats.
	time.Sleep(5 * m.opts.HeartbeatInterval)
	after, heapAfter := goroutinesAndHeap()
	t.Logf("%d idle anchors: %+d goroutines (%.3f per group), %+d KiB heap and stacks (%.1f KiB per group, kfake's groups included)",
		idleGroups, after-before, float64(after-before)/idleGroups, (heapAfter-heapBefore)>>10, float64(heapAfter-heapBefore)/1024/idleGroups)
	// At most the tasks in flight at the moment of counting, which the
	// manager bounds by MaxInflight per lane, its scheduler, and the control-plane
	// client's connections to the broker (one per kind of request).
	if grew := after - before; grew > 2*m.opts.MaxInflight+8 {
		t.Fatalf("goroutines grew by %d with %d idle anchors", grew, idleGroups)
	}
}

func goroutinesAndHeap() (int, int64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), int64(ms.HeapAlloc + ms.StackInuse)
}

// With YieldWhenReplaced, an anchor fenced by another manager's of the same
// instance id stops and leaves the manager; the other one stays.
func TestReplacedAnchorStops(t *testing.T) {
	cl, _ := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	newYielding := func() *Manager {
		m, err := New(Options{Client: cl, InstanceID: "streamshift-c", HeartbeatInterval: 20 * time.Millisecond, YieldWhenReplaced: true, Log: zerolog.Nop()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Close)
		return m
	}
	m1, m2 := newYielding(), newYielding()
	m1.Ensure("g", []string{"a"})
	if _, err := m1.Generation(ctx, "g"); err != nil {
		t.Fatal(err)
	}
	m2.Ensure("g", []string{"a"})
	if _, err := m2.Generation(ctx, "g"); err != nil {
		t.Fatal(err)
	}
	for m1.Running("g") {
		if ctx.Err() != nil {
			t.Fatal("the replaced anchor never stopped")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !m2.Running("g") {
		t.Fatal("the replacing anchor stopped")
	}
}
