// Package loglimit spaces the lines of a warning that may come many times
// a second (refused client connections, a hammered admin port, failed
// accepts, a link its peer refuses at every retry): the first line, then
// at most one per interval, each telling how many were held back since
// the one before, so a flood cannot bury the rest of the log.
//
// It owns the spacing only: no logger (the caller writes the line) and no
// clock (the caller passes its time: the proxy's coarse clock or
// time.Now). It imports nothing of the project.
package loglimit

import (
	"sync/atomic"
	"time"
)

// Limiter is one warning's spacing; safe for concurrent use. Its zero
// value lets every line through; set Every before the first Allow.
type Limiter struct {
	Every time.Duration
	next  atomic.Int64 // unix nanoseconds: no line before
	held  atomic.Int64 // lines held back since the last one let through
}

// Allow says whether a line may be written at now (unix nanoseconds) and,
// if so, how many were held back since the last one.
func (l *Limiter) Allow(now int64) (ok bool, held int64) {
	next := l.next.Load()
	if now < next || !l.next.CompareAndSwap(next, now+int64(l.Every)) {
		l.held.Add(1)
		return false, 0
	}
	return true, l.held.Swap(0)
}
