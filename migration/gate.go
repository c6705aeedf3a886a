package migration

import (
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/streamshift/streamshift/coordinator"
)

// Gate holds a group's classic requests while a takeover runs (the
// takeover's Holder), and counts the group's requests forwarded upstream and
// not answered yet, so a takeover starts from a group with nothing in
// flight (the drain).
type Gate struct {
	// drainTimeout bounds the drain, on clock (the coordinator's): a
	// forwarded request whose client connection closed never reports its
	// response.
	clock        coordinator.Clock
	drainTimeout time.Duration
	log          zerolog.Logger

	mu     sync.Mutex
	groups map[string]*gatedGroup
}

type gatedGroup struct {
	inflight int
	held     bool
	// releasing: the queue is being run after a Release; arrivals join
	// its tail so the arrival order holds.
	releasing bool
	queue     []func()
	// drain is the running takeover's wait for the group's forwarded
	// requests; nil when none waits.
	drain *drainWait
}

// drainWait is one Hold's wait: its callback and the timer bounding it. A
// timer fires only its own wait, never a later Hold's.
type drainWait struct {
	drained func()
	timer   coordinator.Timer
}

// takeDrain ends the group's drain wait, if any, and returns its callback.
func (gg *gatedGroup) takeDrain() func() {
	w := gg.drain
	if w == nil {
		return nil
	}
	gg.drain = nil
	if w.timer != nil {
		w.timer.Stop()
	}
	return w.drained
}

func newGate(clock coordinator.Clock, drainTimeout time.Duration, log zerolog.Logger) *Gate {
	return &Gate{clock: clock, drainTimeout: drainTimeout, log: log, groups: map[string]*gatedGroup{}}
}

func (g *Gate) group(id string) *gatedGroup {
	gg := g.groups[id]
	if gg == nil {
		gg = &gatedGroup{}
		g.groups[id] = gg
	}
	return gg
}

// forget drops an idle group's entry.
func (g *Gate) forget(id string, gg *gatedGroup) {
	if gg.inflight == 0 && !gg.held && !gg.releasing && len(gg.queue) == 0 && gg.drain == nil {
		delete(g.groups, id)
	}
}

// Enter runs f now, or queues it while the group is held or its queue is
// being released; held, if not nil, is called (under the gate's lock, so
// before a Release) when f is queued. The request is counted in flight from
// the moment f runs, in the same step as the held check, so a takeover that
// starts later waits for it whatever f does; f calls answered once the
// request is answered (at once if it is not forwarded).
func (g *Gate) Enter(id string, f func(answered func()), held func()) {
	if id == "" {
		f(func() {})
		return
	}
	g.mu.Lock()
	gg := g.groups[id]
	if gg != nil && (gg.held || gg.releasing) {
		gg.queue = append(gg.queue, func() { f(g.sent(id)) })
		if held != nil {
			held()
		}
		g.mu.Unlock()
		return
	}
	answered := g.sentLocked(id)
	g.mu.Unlock()
	f(answered)
}

// InFlight is how many requests of the group passed the gate and are not
// answered yet.
func (g *Gate) InFlight(id string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if gg := g.groups[id]; gg != nil {
		return gg.inflight
	}
	return 0
}

// sent counts a request of the group in flight; answered is called once
// with its response.
func (g *Gate) sent(id string) (answered func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.sentLocked(id)
}

func (g *Gate) sentLocked(id string) (answered func()) {
	g.group(id).inflight++
	var once sync.Once
	return func() { once.Do(func() { g.answered(id) }) }
}

func (g *Gate) answered(id string) {
	g.mu.Lock()
	gg := g.groups[id]
	if gg == nil {
		g.mu.Unlock()
		return
	}
	gg.inflight--
	var drained func()
	if gg.inflight <= 0 {
		gg.inflight = 0
		drained = gg.takeDrain()
	}
	g.forget(id, gg)
	g.mu.Unlock()
	if drained != nil {
		go drained()
	}
}

// Hold implements Holder.
func (g *Gate) Hold(id string, drained func()) {
	g.mu.Lock()
	gg := g.group(id)
	gg.held = true
	if gg.inflight == 0 {
		g.mu.Unlock()
		go drained()
		return
	}
	w := &drainWait{drained: drained}
	gg.drain = w
	n := gg.inflight
	w.timer = g.clock.AfterFunc(g.drainTimeout, func() {
		g.mu.Lock()
		gg := g.groups[id]
		late := gg != nil && gg.drain == w
		if late {
			gg.drain = nil
		}
		g.mu.Unlock()
		if late {
			g.log.Warn().Str("group", id).Dur("after", g.drainTimeout).Msg("takeover: drain timed out (a forwarded request never answered); going on")
			drained()
		}
	})
	g.mu.Unlock()
	g.log.Info().Str("group", id).Int("in_flight", n).Msg("takeover: draining forwarded classic requests")
}

// Release implements Holder: the held requests run in arrival
// order, on a goroutine of their own (Release may be called on a
// coordinator goroutine, which the requests need).
func (g *Gate) Release(id string) {
	g.mu.Lock()
	gg := g.groups[id]
	if gg == nil || !gg.held {
		g.mu.Unlock()
		return
	}
	gg.held = false
	gg.takeDrain()
	if gg.releasing {
		g.mu.Unlock()
		return
	}
	gg.releasing = true
	g.mu.Unlock()
	go func() {
		for {
			g.mu.Lock()
			if gg.held || len(gg.queue) == 0 {
				gg.releasing = false
				g.forget(id, gg)
				g.mu.Unlock()
				return
			}
			f := gg.queue[0]
			gg.queue = gg.queue[1:]
			g.mu.Unlock()
			f()
		}
	}()
}
