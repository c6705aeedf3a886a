package coordinator

import (
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/internal/backoff"
)

// Takeover attempts of a group are paced. A Kafka 4.4 streams member that
// is JOINING sends its next heartbeat as soon as the last one is answered,
// whatever the error (StreamsGroupHeartbeatRequestManager: JOINING heartbeats
// before the interval, and a retriable error only arms the backoff, which
// JOINING skips): COORDINATOR_LOAD_IN_PROGRESS comes back in about 10 ms. A
// takeover that failed would then be attempted again (DescribeGroups, the
// hold and drain of the group's requests, a flight-recorder incident) for
// every member about a hundred times a second. So after a failed attempt the
// group's next join waits, its request held, until the group's backoff
// has passed: TakeoverBackoffInitial, doubled after every failure up to
// TakeoverBackoffMax (well below the client's request.timeout.ms, 30 s by
// default, so the held join is answered before the client gives up on it).
// A success forgets the group's backoff; so does a quiet TakeoverBackoffMax
// after the last wait. The backoff is the group's migration state
// (migration_state.go), on its queue and the coordinator's clock.
const (
	TakeoverBackoffInitial = time.Second
	TakeoverBackoffMax     = 8 * time.Second
)

// pace returns the group's backoff, new at the initial delay if it had
// none, with next set by set(now, pace) and its forgetting re-armed.
// Under exec.
func (c *Coordinator) pace(s *groupQueue, set func(now time.Time, p *takeoverPace)) {
	st := s.migState()
	p := st.pace
	if p == nil {
		p = &takeoverPace{retry: backoff.Backoff{Min: TakeoverBackoffInitial, Max: TakeoverBackoffMax}}
		st.pace = p
	}
	now := c.clock.Now()
	set(now, p)
	quiet := p.next.Sub(now) + TakeoverBackoffMax + time.Nanosecond
	if p.forget != nil {
		p.forget.Reset(quiet)
		return
	}
	p.forget = c.clock.AfterFunc(quiet, func() {
		c.run(s.id, func(q *groupQueue) {
			if q != s || q.mig() == nil || q.mig().pace != p || c.clock.Now().Sub(p.next) <= TakeoverBackoffMax {
				return // the group failed again meanwhile
			}
			q.mig().pace = nil
			q.endMigrationIfIdle()
		}, nil)
	})
}

// TakeoverWait returns once the group's next takeover may be attempted: at
// once unless its last attempt failed less than its backoff ago. It
// returns false if cancel closed first (the client is gone: nobody to
// answer). A group without a queue has no backoff: no hop.
func (c *Coordinator) TakeoverWait(groupID string, cancel <-chan struct{}) bool {
	c.mu.Lock()
	_, queued := c.queues[groupID]
	c.mu.Unlock()
	if !queued {
		return true
	}
	left := make(chan time.Duration, 1)
	c.run(groupID, func(s *groupQueue) {
		var d time.Duration
		if st := s.mig(); st != nil && st.pace != nil {
			d = st.pace.next.Sub(c.clock.Now())
		}
		left <- d
	}, func(*streams.CoordError) { left <- 0 })
	var d time.Duration
	select {
	case d = <-left:
	case <-cancel:
		return false
	}
	if d <= 0 {
		return true
	}
	due := make(chan struct{})
	t := c.clock.AfterFunc(d, func() { close(due) })
	select {
	case <-due:
		return true
	case <-cancel:
		t.Stop()
		return false
	}
}

// TakeoverFailed starts or lengthens the group's backoff after a failed
// attempt; tell, if not nil, is told its length (for the log). It does
// not wait for the group's queue (it may be called on it); a wait that
// starts after it returns waits for it.
func (c *Coordinator) TakeoverFailed(groupID string, tell func(time.Duration)) {
	c.run(groupID, func(s *groupQueue) {
		var wait time.Duration
		c.pace(s, func(now time.Time, p *takeoverPace) {
			// Less a jitter: groups that failed together (one
			// broker down) do not retry together.
			wait = p.retry.Next()
			p.next = now.Add(wait)
		})
		if tell != nil {
			tell(wait)
		}
	}, nil)
}

// TakeoverNotReady holds the group's next attempt for the initial backoff
// without lengthening it: the upstream group is rebalancing, which takes a
// few seconds and ends by itself.
func (c *Coordinator) TakeoverNotReady(groupID string) {
	c.run(groupID, func(s *groupQueue) {
		c.pace(s, func(now time.Time, p *takeoverPace) { p.next = now.Add(TakeoverBackoffInitial) })
	}, nil)
}

// TakeoverSucceeded forgets the group's backoff.
func (c *Coordinator) TakeoverSucceeded(groupID string) {
	c.run(groupID, func(s *groupQueue) {
		if st := s.mig(); st != nil {
			st.stopPace()
			s.endMigrationIfIdle()
		}
	}, nil)
}
