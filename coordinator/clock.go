package coordinator

import (
	"container/heap"
	"sync"
	"time"

	"github.com/streamshift/streamshift/internal/indexheap"
)

// Clock is the coordinator's source of time and timers, so that tests run in
// virtual time.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine (or, for a ManualClock, inside
	// Advance) once d has passed.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc.
type Timer interface {
	// Stop prevents the call if it has not happened yet.
	Stop() bool
	// Reset makes the call happen d from now (again, if it already did).
	Reset(d time.Duration) bool
}

// SystemClock is the wall clock.
type SystemClock struct{}

func (SystemClock) Now() time.Time { return time.Now() }

func (SystemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// ManualClock is a virtual clock: time moves only in Advance, which runs the
// due timers in deadline order (ties in scheduling order) on the caller's
// goroutine.
type ManualClock struct {
	mu     sync.Mutex
	now    time.Time
	seq    uint64
	timers manualTimers
}

// NewManualClock returns a virtual clock starting at start.
func NewManualClock(start time.Time) *ManualClock {
	return &ManualClock{now: start}
}

func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *ManualClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &manualTimer{clock: c, at: c.now.Add(d), seq: c.seq, f: f, index: -1}
	heap.Push(&c.timers, t)
	return t
}

// Advance moves time forward by d, firing every timer due on the way at its
// own deadline.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	for {
		if len(c.timers) == 0 || c.timers[0].at.After(end) {
			break
		}
		t := heap.Pop(&c.timers).(*manualTimer)
		if t.at.After(c.now) {
			c.now = t.at
		}
		c.mu.Unlock()
		t.f()
		c.mu.Lock()
	}
	c.now = end
	c.mu.Unlock()
}

// Pending is the number of timers not yet fired or stopped.
func (c *ManualClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

type manualTimer struct {
	clock *ManualClock
	at    time.Time
	seq   uint64
	f     func()
	index int
}

func (t *manualTimer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.index < 0 {
		return false
	}
	heap.Remove(&c.timers, t.index)
	return true
}

type manualTimers []*manualTimer

func (t *manualTimer) Reset(d time.Duration) bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	active := t.index >= 0
	if active {
		heap.Remove(&c.timers, t.index)
	}
	c.seq++
	t.at, t.seq = c.now.Add(d), c.seq
	heap.Push(&c.timers, t)
	return active
}

func (h manualTimers) Len() int { return len(h) }
func (h manualTimers) Less(i, j int) bool {
	if h[i].at.Equal(h[j].at) {
		return h[i].seq < h[j].seq
	}
	return h[i].at.Before(h[j].at)
}
func (h manualTimers) Swap(i, j int) { indexheap.Swap(h, i, j, setTimerIndex) }
func (h *manualTimers) Push(x any)   { indexheap.Push(h, x, setTimerIndex) }
func (h *manualTimers) Pop() any     { return indexheap.Pop(h, setTimerIndex) }

func setTimerIndex(t *manualTimer, i int) { t.index = i }
