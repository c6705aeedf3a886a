package anchor

import (
	"container/heap"
	"time"
)

// An idle anchor holds no goroutine: a proxy may anchor tens of thousands of
// groups, and a goroutine (with its stack) per anchor made each idle group
// cost one. The manager's scheduler goroutine keeps the anchors in a queue
// ordered by when each acts next (its next heartbeat, or its next join after
// a failure) and starts a short task for each due one: a heartbeat, or a
// join and sync. At most MaxInflight tasks run at once; a due anchor waits
// in the queue while they do.

// DefaultMaxInflight bounds the anchor tasks running at once.
const DefaultMaxInflight = 256

// schedule puts a (not running, not stopped) anchor in the queue to act at
// at. m.mu held.
func (m *Manager) schedule(a *anchor, at time.Time) {
	a.next = at
	if a.index >= 0 {
		heap.Fix(&m.due, a.index)
	} else {
		heap.Push(&m.due, a)
	}
	if m.due[0] == a {
		m.poke()
	}
}

// unschedule takes a out of the queue. m.mu held.
func (m *Manager) unschedule(a *anchor) {
	if a.index >= 0 {
		heap.Remove(&m.due, a.index)
	}
}

// poke wakes the scheduler (the queue's head changed, or a task ended).
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
		for len(m.due) > 0 && !m.due[0].next.After(now) && m.running < m.opts.MaxInflight {
			a := heap.Pop(&m.due).(*anchor)
			a.busy = true
			m.running++
			go m.act(a)
		}
		wait := time.Hour
		if len(m.due) > 0 && m.running < m.opts.MaxInflight {
			wait = max(m.due[0].next.Sub(now), 0)
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
// to the queue, or, stopped meanwhile, ends.
func (m *Manager) act(a *anchor) {
	next, stop := a.step()
	m.mu.Lock()
	a.busy = false
	m.running--
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
		next = time.Now()
	}
	if a.stopped {
		close(a.done)
	} else {
		m.schedule(a, next)
	}
	m.poke()
	m.mu.Unlock()
}

// stop stops an anchor: it leaves the queue at once, or ends once its
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
func (q dueQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index = i
	q[j].index = j
}
func (q *dueQueue) Push(x any) {
	a := x.(*anchor)
	a.index = len(*q)
	*q = append(*q, a)
}
func (q *dueQueue) Pop() any {
	old := *q
	a := old[len(old)-1]
	old[len(old)-1] = nil
	a.index = -1
	*q = old[:len(old)-1]
	return a
}
