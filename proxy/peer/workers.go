package peer

import (
	"sync/atomic"
	"time"
)

// Workers run the interceptors of other instances' serve calls. An
// idle worker takes the next call, so a steady stream of calls neither
// starts a goroutine per call nor grows a fresh stack through the route
// and the coordinator each time: in the owner's profile of hopped
// heartbeats those were 13% of its CPU (BENCHMARKS.md, "Hop to the
// group's owner"). A call never waits for a busy worker: with none idle, a
// new one starts, so a handler that blocks (an authorization probe, a held
// JoinGroup) holds only its own worker. A worker idle for workerIdle
// ends.
type Workers struct {
	work chan func()
	// started counts the workers started, idle those waiting for a call
	// (tests).
	started atomic.Int64
	idle    atomic.Int32
}

const workerIdle = 10 * time.Second

// NewWorkers makes the pool: no worker until the first call.
func NewWorkers() *Workers { return &Workers{work: make(chan func())} }

// Run runs f on an idle worker, or a new one.
func (w *Workers) Run(f func()) {
	select {
	case w.work <- f:
	default:
		w.started.Add(1)
		go w.loop(f)
	}
}

func (w *Workers) loop(f func()) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		f()
		idle.Reset(workerIdle)
		w.idle.Add(1)
		select {
		case f = <-w.work:
			w.idle.Add(-1)
		case <-idle.C:
			w.idle.Add(-1)
			return
		}
	}
}
