package anchor

import (
	"container/heap"
	"time"

	"github.com/streamshift/streamshift/internal/indexheap"
)

// An idle anchor holds no goroutine: a proxy may anchor tens of thousands of
// groups, and a goroutine (with its stack) per anchor made each idle group
// cost one. The manager's scheduler goroutine keeps the anchors in queues
// ordered by when each acts next and starts a short task for each due one.
// There are two lanes, each running at most MaxInflight tasks at once: joins
// (a JoinGroup may wait for the upstream's rebalance, seconds for a new
// group) and heartbeats, so slow joins never hold up the heartbeats of the
// anchors already in their groups. A due anchor waits in its lane's queue
// while the lane is full.

// DefaultMaxInflight bounds the anchor tasks of a lane running at once.
const DefaultMaxInflight = 256

// The lanes.
const (
	heartbeatLane = iota
	joinLane
	lanes
)

// lane is one lane's queue and its running tasks.
type lane struct {
	due     dueQueue
	running int
}

// schedule puts a (not running, not stopped) anchor in a lane's queue to
// act at at: the join lane if join, else the heartbeat lane. m.mu held.
func (m *Manager) schedule(a *anchor, at time.Time, join bool) {
	l := heartbeatLane
	if join {
		l = joinLane
	}
	if a.index >= 0 && a.lane != l {
		m.unschedule(a)
	}
	a.next, a.lane = at, l
	q := &m.lanes[l].due
	if a.index >= 0 {
		heap.Fix(q, a.index)
	} else {
		heap.Push(q, a)
	}
	if (*q)[0] == a {
		m.poke()
	}
}

// unschedule takes a out of its queue. m.mu held.
func (m *Manager) unschedule(a *anchor) {
	if a.index >= 0 {
		heap.Remove(&m.lanes[a.lane].due, a.index)
	}
}

// poke wakes the scheduler (a queue's head changed, or a task ended).
func (m *Manager) poke() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// startScheduler starts the scheduler goroutine once. m.mu held.
func (m *Manager) startScheduler() {
	if m.schedulerDone != nil {
		return
	}
	m.schedulerDone = make(chan struct{})
	go m.runScheduler()
}

func (m *Manager) runScheduler() {
	defer close(m.schedulerDone)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return
		}
		now := time.Now()
		wait := time.Hour
		for i := range m.lanes {
			l := &m.lanes[i]
			for len(l.due) > 0 && !l.due[0].next.After(now) && l.running < m.opts.MaxInflight {
				a := heap.Pop(&l.due).(*anchor)
				a.busy = true
				l.running++
				go m.act(a)
			}
			if len(l.due) > 0 && l.running < m.opts.MaxInflight {
				wait = min(wait, max(l.due[0].next.Sub(now), 0))
			}
		}
		m.mu.Unlock()
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-m.wake:
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		}
	}
}

// act is one task of an anchor: a join and sync if it is not a synced
// member (or must rejoin), a heartbeat otherwise. Then the anchor goes back
// to a queue, or, stopped meanwhile, ends.
func (m *Manager) act(a *anchor) {
	next, stop := a.step()
	join := a.mustJoin()
	m.mu.Lock()
	a.busy = false
	m.lanes[a.lane].running--
	if stop && !a.stopped {
		a.stopped = true
		a.cancel()
		if m.anchors[a.group] == a {
			delete(m.anchors, a.group)
		}
	}
	if a.kicked {
		// Woken while this task ran (a subscription change, a fenced
		// commit): act again at once.
		a.kicked = false
		next, join = time.Now(), true
	}
	if a.stopped {
		close(a.done)
	} else {
		m.schedule(a, next, join)
	}
	m.poke()
	m.mu.Unlock()
}

// stop stops an anchor: it leaves its queue at once, or ends once its
// running task does; done is closed then. m.mu held.
func (m *Manager) stop(a *anchor) {
	if a.stopped {
		return
	}
	a.stopped = true
	a.cancel()
	m.unschedule(a)
	if !a.busy {
		close(a.done)
	}
}

// dueQueue orders anchors by when they act next.
type dueQueue []*anchor

func (q dueQueue) Len() int           { return len(q) }
func (q dueQueue) Less(i, j int) bool { return q[i].next.Before(q[j].next) }
func (q dueQueue) Swap(i, j int)      { indexheap.Swap(q, i, j, setDueIndex) }
func (q *dueQueue) Push(x any)        { indexheap.Push(q, x, setDueIndex) }
func (q *dueQueue) Pop() any          { return indexheap.Pop(q, setDueIndex) }

func setDueIndex(a *anchor, i int) { a.index = i }

// Stats is what the manager holds now, for its metrics.
type Stats struct {
	Anchors           int // anchors running (idle or acting)
	HeartbeatsRunning int
	JoinsRunning      int
}

// Stats reads the manager's counts.
func (m *Manager) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return Stats{Anchors: len(m.anchors), HeartbeatsRunning: m.lanes[heartbeatLane].running, JoinsRunning: m.lanes[joinLane].running}
}
