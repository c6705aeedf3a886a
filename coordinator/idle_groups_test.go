package coordinator

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// An idle group costs the coordinator no goroutine: a group's executor
// runs only while it has work queued, and its timers (sessions, the
// assignment interval) are runtime timers. 2,000 groups of one member each,
// on the wall clock with its real timers.
func TestIdleGroupsHoldNoGoroutine(t *testing.T) {
	md := NewStaticMetadata()
	md.SetTopic("foo", 4)
	c, err := New(Options{Metadata: md})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	heartbeat := func(r *kmsg.StreamsGroupHeartbeatRequest) {
		done := make(chan *kmsg.StreamsGroupHeartbeatResponse, 1)
		c.StreamsGroupHeartbeat(r, streams.ClientInfo{ClientID: "c", ClientHost: "/127.0.0.1"}, func(resp *kmsg.StreamsGroupHeartbeatResponse) { done <- resp })
		if resp := <-done; resp.ErrorCode != 0 {
			t.Fatalf("heartbeat %s: error %d", r.Group, resp.ErrorCode)
		}
	}
	heartbeat(joinReq("warm", "m", "p", sourceTopology("foo")))
	before, heapBefore := goroutinesAndHeap()
	const groups = 2000
	for i := range groups {
		heartbeat(joinReq(fmt.Sprintf("g%05d", i), "m", "p", sourceTopology("foo")))
	}
	after, heapAfter := goroutinesAndHeap()
	t.Logf("%d idle groups: %+d goroutines, %.1f KiB heap and stacks per group", groups, after-before, float64(heapAfter-heapBefore)/1024/groups)
	if after-before > 2 {
		t.Fatalf("goroutines grew by %d with %d idle groups", after-before, groups)
	}
}

func goroutinesAndHeap() (int, int64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), int64(ms.HeapAlloc + ms.StackInuse)
}

// Groups whose members' sessions expired are Empty; once the check
// interval passed their state is gone: no queue, no timer left.
func TestExpiredGroupsFreeTheirState(t *testing.T) {
	md := NewStaticMetadata()
	md.SetTopic("foo", 4)
	clock := NewManualClock(testStart)
	c, err := New(Options{Metadata: md, Clock: clock, GroupExpiration: testExpiration})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before, heapBefore := goroutinesAndHeap()
	const groups = 2000
	for i := range groups {
		done := make(chan struct{})
		c.StreamsGroupHeartbeat(joinReq(fmt.Sprintf("g%05d", i), "m", "p", sourceTopology("foo")), streams.ClientInfo{}, func(*kmsg.StreamsGroupHeartbeatResponse) { close(done) })
		<-done
	}
	_, heapFull := goroutinesAndHeap()
	clock.Advance(time.Minute) // the sessions expire: every group is Empty
	waitIdle(t, c)
	clock.Advance(testExpiration)
	waitIdle(t, c)
	c.mu.Lock()
	left := len(c.queues)
	c.mu.Unlock()
	after, heapAfter := goroutinesAndHeap()
	t.Logf("%d groups: %.1f KiB per group while joined, %.1f KiB per group left after they expired; %+d goroutines",
		groups, float64(heapFull-heapBefore)/1024/groups, float64(heapAfter-heapBefore)/1024/groups, after-before)
	if left != 0 || clock.Pending() != 0 {
		t.Fatalf("%d groups and %d timers left after expiry", left, clock.Pending())
	}
}

// waitIdle waits until no group of c has work queued or running.
func waitIdle(t *testing.T, c *Coordinator) {
	t.Helper()
	for {
		c.mu.Lock()
		busy := 0
		for _, s := range c.queues {
			s.mu.Lock()
			if s.running {
				busy++
			}
			s.mu.Unlock()
		}
		c.mu.Unlock()
		if busy == 0 {
			return
		}
		runtime.Gosched()
	}
}
