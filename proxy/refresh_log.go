package proxy

import "time"

// The spacing of the warnings of a failing control-plane metadata refresh:
// the first failure at once, then after doubling intervals up to the
// longest. A refresh of a cluster that is down fails every second until
// it is back; one line each would bury everything else (132 lines in
// 150 s were seen).
const (
	refreshLogFirst = 2 * time.Second
	refreshLogMax   = 5 * time.Minute
)

// refreshLog decides which failures of a run of failing refreshes are
// logged, and notes the recovery. It is used by the refresh loop only.
type refreshLog struct {
	failing  bool
	since    time.Time     // the first failure of the run
	next     time.Time     // the next failure logged comes at or after it
	interval time.Duration // between the last line and next
	held     int           // failures since the last line
	total    int           // failures of the run
}

// failed records a failure at now; log says whether to write a line, held
// how many failures were not logged since the previous line.
func (l *refreshLog) failed(now time.Time) (log bool, held int) {
	l.total++
	if !l.failing {
		*l = refreshLog{failing: true, since: now, next: now.Add(refreshLogFirst), interval: refreshLogFirst, total: 1}
		return true, 0
	}
	if now.Before(l.next) {
		l.held++
		return false, 0
	}
	held = l.held
	l.held = 0
	l.interval = min(2*l.interval, refreshLogMax)
	l.next = now.Add(l.interval)
	return true, held
}

// succeeded records a success at now; recovered says whether it ends a
// run of failures (then worth a line: how many, since when).
func (l *refreshLog) succeeded(now time.Time) (recovered bool, failures int, failingFor time.Duration) {
	if !l.failing {
		return false, 0, 0
	}
	failures, failingFor = l.total, now.Sub(l.since)
	*l = refreshLog{}
	return true, failures, failingFor
}
