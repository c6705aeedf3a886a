package migration

import (
	"time"

	"github.com/streamshift/streamshift/coordinator"
)

// Gate holds a group's classic requests while a takeover runs (the
// takeover's Holder), and counts the group's requests forwarded upstream and
// not answered yet, so a takeover starts from a group with nothing in
// flight (the drain). Its state is the group's, on the group's executor
// (coordinator/migration_state.go); Gate only carries the drain timeout.
type Gate struct {
	c *coordinator.Coordinator
	// drainTimeout bounds the drain, on the coordinator's clock: a
	// forwarded request whose client connection closed never reports its
	// response.
	drainTimeout time.Duration
}

// Enter runs f now, or queues it while the group is held or its queue is
// being released; held, if not nil, is called when f is queued, before the
// Release that runs it. The request is counted in flight from the moment f
// runs, in the same step as the held check, so a takeover that starts
// later waits for it whatever f does; f calls answered once the request is
// answered (at once if it is not forwarded).
func (g Gate) Enter(id string, f func(answered func()), held func()) {
	g.c.EnterClassic(id, f, held)
}

// InFlight is how many requests of the group passed the gate and are not
// answered yet.
func (g Gate) InFlight(id string) int { return g.c.ClassicInFlight(id) }

// Hold implements Holder.
func (g Gate) Hold(id string, drained func()) { g.c.HoldClassic(id, g.drainTimeout, drained) }

// Release implements Holder: the held requests run in arrival order, on a
// goroutine of their own.
func (g Gate) Release(id string) { g.c.ReleaseClassic(id) }
