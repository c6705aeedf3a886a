package coordinator

import "time"

// assignmentIntervalRunning reports whether the last target assignment is
// younger than streams.assignment.interval.ms.
func (ch *change) assignmentIntervalRunning() bool {
	iv := ch.cfg.AssignmentInterval
	if iv <= 0 || ch.g.AssignmentTimestamp == 0 {
		return false
	}
	return ch.now.Before(time.UnixMilli(ch.g.AssignmentTimestamp).Add(iv))
}

// scheduleAssignmentInterval computes the delayed target assignment when the
// interval ends, so members waiting get it on their next heartbeat.
func (ch *change) scheduleAssignmentInterval() {
	if ch.hasTimer(assignmentIntervalTimerKey) {
		return
	}
	d := time.UnixMilli(ch.g.AssignmentTimestamp).Add(ch.cfg.AssignmentInterval).Sub(ch.now)
	ch.schedule(assignmentIntervalTimerKey, d, func(f *change) {
		f.maybeComputeTargetAssignment()
	})
}

// maybeComputeTargetAssignment is the timers' work: compute the target if
// the group has members and its assignment is behind.
func (ch *change) maybeComputeTargetAssignment() {
	g := ch.g
	if len(g.Members) == 0 || g.AssignmentEpoch >= g.GroupEpoch || g.Topology == nil {
		return
	}
	if ch.hasTimer(initialDelayTimerKey) {
		return
	}
	if ch.assignmentIntervalRunning() {
		ch.scheduleAssignmentInterval()
		return
	}
	if _, _, err := ch.configureTopology(g.Topology); err != nil {
		return
	}
	_ = ch.computeTargetAssignment() // on failure the next heartbeat retries and reports it
}
