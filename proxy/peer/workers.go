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
//
// idle counts the workers committed to take a call: a worker adds one
// before it waits, a call claims one before it hands its function over,
// and a worker whose idle time ran out takes its one back, or, when a call
// claimed it first, waits for that call. So a call that claimed a worker
// never blocks long, and a call never starts a worker while one is idle
// (a non-blocking send would miss a worker between its count and its
// receive, and start a second).
type Workers struct {
	work chan func()
	// started counts the workers started (tests).
	started atomic.Int64
	idle    atomic.Int32
}

const workerIdle = 10 * time.Second

// NewWorkers makes the pool: no worker until the first call.
func NewWorkers() *Workers { return &Workers{work: make(chan func())} }

// Run runs f on an idle worker, or a new one.
func (w *Workers) Run(f func()) {
	for {
		n := w.idle.Load()
		if n == 0 {
			w.started.Add(1)
			go w.loop(f)
			return
		}
		if w.idle.CompareAndSwap(n, n-1) {
			w.work <- f
			return
		}
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
		case <-idle.C:
			if w.retire() {
				return
			}
			f = <-w.work
		}
	}
}

// retire takes back the worker's claim on a call; false when every claim
// is taken by a call already on its way, one of which this worker must
// take.
func (w *Workers) retire() bool {
	for {
		n := w.idle.Load()
		if n == 0 {
			return false
		}
		if w.idle.CompareAndSwap(n, n-1) {
			return true
		}
	}
}
