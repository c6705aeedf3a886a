package migration

import (
	"sync"
	"time"

	"github.com/streamshift/streamshift/coordinator"
)

// Takeover attempts of a group are paced. A Kafka 4.4 streams member that
// is JOINING sends its next heartbeat as soon as the last one is answered,
// whatever the error (StreamsGroupHeartbeatRequestManager: JOINING heartbeats
// before the interval, and a retriable error only arms the backoff, which
// JOINING skips): COORDINATOR_LOAD_IN_PROGRESS comes back in about 10 ms. A
// takeover that failed would then be attempted again (DescribeGroups, the
// hold and drain of the group's requests, a flight-recorder incident) for
// every member about a hundred times a second. So after a failed attempt the
// group's next join waits here, its request held, until the group's backoff
// has passed: takeoverBackoffInitial, doubled after every failure up to
// takeoverBackoffMax (well below the client's request.timeout.ms, 30 s by
// default, so the held join is answered before the client gives up on it).
// A success forgets the group; so does a quiet takeoverBackoffMax after the
// last wait.
const (
	takeoverBackoffInitial = time.Second
	takeoverBackoffMax     = 8 * time.Second
)

// takeoverPacing is the backoff of every group whose last takeover attempt
// failed, on the coordinator's clock.
type takeoverPacing struct {
	clock            coordinator.Clock
	initial, maximum time.Duration

	mu     sync.Mutex
	groups map[string]*groupPace
}

// groupPace: no attempt of the group before next; the backoff after its
// next failure is delay.
type groupPace struct {
	next  time.Time
	delay time.Duration
}

func newTakeoverPacing(clock coordinator.Clock) *takeoverPacing {
	return &takeoverPacing{clock: clock, initial: takeoverBackoffInitial, maximum: takeoverBackoffMax, groups: map[string]*groupPace{}}
}

// wait returns once the group may be attempted: at once unless its last
// attempt failed less than its backoff ago. It returns false if cancel
// closed first (the client is gone: nobody to answer).
func (p *takeoverPacing) wait(group string, cancel <-chan struct{}) bool {
	p.mu.Lock()
	now := p.clock.Now()
	g := p.groups[group]
	if g == nil || !now.Before(g.next) {
		p.mu.Unlock()
		return true
	}
	due := make(chan struct{})
	t := p.clock.AfterFunc(g.next.Sub(now), func() { close(due) })
	p.mu.Unlock()
	select {
	case <-due:
		return true
	case <-cancel:
		t.Stop()
		return false
	}
}

// failed starts or lengthens the group's backoff after a failed attempt.
func (p *takeoverPacing) failed(group string) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Now()
	g := p.paceLocked(group, now)
	wait := g.delay
	g.next = now.Add(wait)
	g.delay = min(2*g.delay, p.maximum)
	return wait
}

// notReady holds the group's next attempt for the initial backoff without
// lengthening it: the upstream group is rebalancing, which takes a few
// seconds and ends by itself.
func (p *takeoverPacing) notReady(group string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Now()
	p.paceLocked(group, now).next = now.Add(p.initial)
}

// paceLocked returns the group's backoff, new at the initial delay if it
// had none, after forgetting the groups quiet for long enough.
func (p *takeoverPacing) paceLocked(group string, now time.Time) *groupPace {
	p.forgetQuietLocked(now)
	g := p.groups[group]
	if g == nil {
		g = &groupPace{delay: p.initial}
		p.groups[group] = g
	}
	return g
}

// succeeded forgets the group's backoff.
func (p *takeoverPacing) succeeded(group string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.groups, group)
}

// forgetQuietLocked drops the groups not attempted for a whole maximum
// backoff after their wait ended (their members gave up, or the group went
// elsewhere): the map holds only groups failing now.
func (p *takeoverPacing) forgetQuietLocked(now time.Time) {
	for id, g := range p.groups {
		if now.Sub(g.next) > p.maximum {
			delete(p.groups, id)
		}
	}
}
