package streams

import "time"

// assignmentIntervalRunning reports whether the last target assignment is
// younger than streams.assignment.interval.ms.
func (ch *Change) assignmentIntervalRunning() bool {
	iv := ch.Config.AssignmentInterval
	if iv <= 0 || ch.Group.AssignmentTimestamp == 0 {
		return false
	}
	return ch.Now.Before(time.UnixMilli(ch.Group.AssignmentTimestamp).Add(iv))
}

// scheduleAssignmentInterval computes the delayed target assignment when the
// interval ends, so members waiting get it on their next heartbeat.
func (ch *Change) scheduleAssignmentInterval() {
	if ch.hasTimer(assignmentIntervalTimerKey) {
		return
	}
	d := time.UnixMilli(ch.Group.AssignmentTimestamp).Add(ch.Config.AssignmentInterval).Sub(ch.Now)
	ch.schedule(assignmentIntervalTimerKey, d, func(f *Change) {
		f.maybeComputeTargetAssignment()
	})
}

// maybeComputeTargetAssignment is the timers' work: compute the target if
// the group has members and its assignment is behind.
func (ch *Change) maybeComputeTargetAssignment() {
	g := ch.Group
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
