package capture

import (
	"slices"
	"strings"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// How long a migration step took, as a reader means it (issue #39): from
// the first request that started it until every task runs again. The
// takeover-done or hand-back-done event marks only the state flip (the
// group served here, or the broker's again): a millisecond, while the
// tasks the step moved may have run nowhere for seconds after it.
//
// Began is the first request that started the step: for a takeover the
// group's first StreamsGroupHeartbeat since the previous step (a takeover
// refused while the broker's group rebalanced is the same takeover), for
// a hand-back the last streams member's leave that led to it; else the
// start event.
//
// Settled is the first request at or after the flip at which the group is
// stable: every task has exactly one owner, and no member in the group is
// mid-rebalance. A classic member is from its JoinGroup (or a Heartbeat
// answered REBALANCE_IN_PROGRESS) until its SyncGroup's answer; a streams
// member while the epoch it was answered is not the one it sent (it has
// not acknowledged its assignment) or is below the group epoch the
// coordinator last bumped to (while streamshift serves the group). A
// capture with the coordinator's group-state events settles a takeover
// where they say every task runs (streams.Group.TasksRunning), as the
// status page does. A hand-back settles, by the same rule, when every
// member of the broker's newest classic generation has its assignment
// (no member mid-rebalance); a capture with the coordinator's
// classic-group-synced events (captures since the proxy tells it) settles
// it there, the instant the status page and the settle metric use.

// settleState is what BuildTimeline tracks for settling.
type settleState struct {
	// groupEpoch is the coordinator's latest group epoch, 0 when the
	// group is not served here.
	groupEpoch float64
	// streamsSince: the group's first StreamsGroupHeartbeat since the
	// previous step ended; lastLeave: the latest streams member's leave.
	streamsSince, lastLeave, stepEnded time.Time
	waiting                            []*Phase
	// stateEvents: the capture has the coordinator's group-state events
	// (captures since issue #39); running is their latest tasksRunning.
	// A takeover then settles when they say the tasks run, the same
	// instant the status page and streamshift_migration_settle_seconds
	// use; an older capture's settles by the exchanges.
	stateEvents, running bool
	// syncEvents: the capture has the coordinator's classic-group-synced
	// events of the group; a hand-back then settles at one.
	syncEvents bool
}

// noteSynced applies a classic-group-synced event: the hand-backs waiting
// settle at it.
func (s *settleState) noteSynced(at time.Time) { s.settleWaiting("hand-back", at) }

// noteState applies a group-state event at at.
func (s *settleState) noteState(l *Line) {
	running, ok := l.Fields[streams.FieldTasksRunning].(bool)
	if !ok {
		return
	}
	s.stateEvents, s.running = true, running
	if running {
		s.settleTakeovers(l.Wall)
	}
}

// settleTakeovers settles the takeovers waiting, once their flip is done.
func (s *settleState) settleTakeovers(at time.Time) { s.settleWaiting("takeover", at) }

// settleWaiting settles the steps of kind waiting whose flip is done by at.
func (s *settleState) settleWaiting(kind string, at time.Time) {
	kept := s.waiting[:0]
	for _, p := range s.waiting {
		if p.Kind == kind && !at.Before(p.To) {
			p.Settled = at
			continue
		}
		kept = append(kept, p)
	}
	s.waiting = kept
}

// laneSettle is a lane's part: mid-rebalance, and a streams member's
// latest answered epoch.
type laneSettle struct {
	rebalancing bool
	epoch       float64
}

// began is the first request that started a step beginning at at.
func (s *settleState) began(kind string, at time.Time) time.Time {
	from := at
	switch kind {
	case "takeover":
		if !s.streamsSince.IsZero() && s.streamsSince.Before(from) {
			from = s.streamsSince
		}
	case "hand-back":
		if !s.lastLeave.IsZero() && s.lastLeave.After(s.stepEnded) && s.lastLeave.Before(from) {
			from = s.lastLeave
		}
	}
	return from
}

// noteExchange updates a lane's rebalancing state from one of its group
// requests.
func (s *settleState) noteExchange(ln *Lane, l *Line, req, resp map[string]any, ok bool) {
	switch l.APIName {
	case "JoinGroup":
		ln.settle.rebalancing = true
	case "SyncGroup":
		if ok {
			ln.settle.rebalancing = false
		}
	case "Heartbeat":
		if slices.ContainsFunc(l.Errors, func(e string) bool { return strings.Contains(e, "REBALANCE_IN_PROGRESS") }) {
			ln.settle.rebalancing = true
		}
	case "StreamsGroupHeartbeat":
		if s.streamsSince.IsZero() {
			s.streamsSince = l.Wall
		}
		sent, _ := req["memberEpoch"].(float64)
		if sent < 0 {
			s.lastLeave = l.Wall
			ln.settle.rebalancing = false
			return
		}
		if ok {
			got, _ := resp["memberEpoch"].(float64)
			ln.settle.epoch = got
			ln.settle.rebalancing = got != sent
		}
	}
}

// stepEnd: a step ended at at (done, failed or superseded).
func (s *settleState) stepEnd(at time.Time) {
	s.stepEnded = at
	s.streamsSince = time.Time{}
}

// stable reports whether every task has one owner and no member in the
// group is mid-rebalance.
func (s *settleState) stable(lanes []*Lane, open map[string]map[string]time.Time) bool {
	if len(open) == 0 {
		return false
	}
	for _, owners := range open {
		if len(owners) != 1 {
			return false
		}
	}
	for _, ln := range lanes {
		if !ln.awaySince.IsZero() {
			continue
		}
		if ln.settle.rebalancing || s.groupEpoch > 0 && ln.settle.epoch > 0 && ln.settle.epoch < s.groupEpoch {
			return false
		}
	}
	return true
}

// settle marks the steps waiting for it settled at at, if the group is
// stable; only a request at or after a step's flip settles it.
func (s *settleState) settle(at time.Time, lanes []*Lane, open map[string]map[string]time.Time) {
	if len(s.waiting) == 0 || !s.stable(lanes, open) {
		return
	}
	kept := s.waiting[:0]
	for _, p := range s.waiting {
		if at.Before(p.To) || p.Kind == "takeover" && s.stateEvents || p.Kind == "hand-back" && s.syncEvents {
			kept = append(kept, p)
			continue
		}
		p.Settled = at
	}
	s.waiting = kept
}

// Took is how long the step took: from its first request until the group
// settled, or until the capture's end (settled false) when it did not.
func (p *Phase) Took(end time.Time) (took time.Duration, settled bool) {
	if p.Settled.IsZero() {
		return end.Sub(p.Began), false
	}
	return p.Settled.Sub(p.Began), true
}

// Flip is the state flip: from the step's start event to its end event.
func (p *Phase) Flip() time.Duration { return p.To.Sub(p.From) }

// span is the step as the text and the page say it: from its first
// request until every task ran again, with its state flip beside it.
func (p *Phase) span(end time.Time, rel func(time.Time) string) string {
	flip := "state flip " + p.Flip().Round(time.Millisecond).String() + " at " + rel(p.From)
	if p.Outcome != "done" {
		return rel(p.Began) + " .. " + rel(p.To) + "  " + flip
	}
	took, settled := p.Took(end)
	if !settled {
		return rel(p.Began) + " .. " + rel(end) + "  not settled by the capture's end (" + took.Round(time.Millisecond).String() + "; " + flip + ")"
	}
	return rel(p.Began) + " .. " + rel(p.Settled) + "  took " + took.Round(time.Millisecond).String() + " until every task ran again (" + flip + ")"
}
