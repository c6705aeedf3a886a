package coordinator

import "time"

// handOff is the part of a group's migration state (migration_state.go)
// that its hand-back and takeover drivers keep: the hand-back's run and its
// last steps (migration_handback.go), and the takeover in progress
// (migration_takeover.go). Guarded by the queue's exec, as the rest of it.
// It uses nothing of the runtime, so the runtime's files need not know the
// drivers' (filedeps_test.go).
type handOff struct {
	// handBack is the group's hand-back run, nil when none is on;
	// handBackChecked is when the group was last checked for one (it does
	// not keep the state).
	handBack        *HandBackRun
	handBackChecked time.Time
	// handingBack: the hand-back's last steps, while streams joins wait;
	// nil when none.
	handingBack *handingBack
	// takingOver is closed when the group's running takeover ends; nil
	// when none runs.
	takingOver chan struct{}
	// settling: a handed-back group's wait for its classic generation on
	// the broker (handback_settle.go); nil when none.
	settling *handBackSettle
}

// HandBackRun is one group's hand-back in progress, as its driver started
// it (StartHandBackRun). Its held joins are read and changed only by work of
// the group's queue.
type HandBackRun struct {
	held []HeldJoin
}

// HeldJoin is a classic JoinGroup a hand-back's barrier holds, as its driver
// will finish it: upstream (the group was handed back) or here (the barrier
// was taken down).
type HeldJoin struct {
	// Timeout is how long the join's upstream answer may take: the longer
	// of its rebalance and session timeouts.
	Timeout time.Duration
	// Upstream sends the join upstream; answered, if not nil, is called
	// once its answer is in.
	Upstream func(answered func())
	// Serve runs the join again here, where the group is then served, or
	// found gone and sent upstream.
	Serve func()
}

// handingBack is a hand-back between the anchor's leave and a grace after
// the end of its held joins' answers: the group is neither here nor formed
// upstream, so a streams join waits until done is closed (WaitHandBack).
type handingBack struct {
	done  chan struct{}
	grace Timer
}

// idle: no hand-back run, no hand-back's last steps and no takeover keep
// the group's migration state.
func (h *handOff) idle() bool {
	return h.handBack == nil && h.handingBack == nil && h.takingOver == nil && h.settling == nil
}

// drop ends what a group going away (unloaded, the coordinator closed)
// leaves of its hand-back and takeover: the held joins of its run are
// served again (they find the group gone: its driver's own end of the run
// then finds none), and joins waiting for a hand-back's last steps or a
// takeover go on. Under exec; tell runs outside it.
func (h *handOff) drop() (tell func()) {
	var held []HeldJoin
	if run := h.handBack; run != nil {
		held, run.held = run.held, nil
		h.handBack = nil
	}
	hb := h.handingBack
	h.handingBack = nil
	if hb != nil && hb.grace != nil {
		hb.grace.Stop()
	}
	takeover := h.takingOver
	h.takingOver = nil
	h.settling.stop()
	h.settling = nil
	return func() {
		if hb != nil {
			close(hb.done)
		}
		if takeover != nil {
			close(takeover)
		}
		if len(held) > 0 {
			go func() {
				for _, j := range held {
					j.Serve()
				}
			}()
		}
	}
}
