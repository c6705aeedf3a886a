package migration

import (
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/translate"
)

// HandBackUpstream is what a hand-back needs of the proxy's upstream side.
// Its methods may be called on a coordinator group's goroutine: they must
// not block (start the I/O and call back later).
type HandBackUpstream interface {
	// LeaveAnchor makes the group's anchor member leave the upstream
	// classic group, so classic members can form it again. From its
	// success on, the group is neither here nor formed upstream until
	// HandBackDone: a streams join must wait.
	LeaveAnchor(group string, done func(error))
	// HandBackDone is called once after every successful LeaveAnchor:
	// the held JoinGroups went upstream and were answered (or the
	// hand-back was given up), so the classic members are on their way
	// into the upstream group.
	HandBackDone(group string)
}

// HandBackCoordinator is the coordinator's hand-back part. BeginHandBack
// calls onBarrier once, when the barrier ends (ready, aborted, or gone).
// A group's run (its held joins, when it was last checked) is the group's
// migration state on its coordinator executor (StartHandBackRun,
// HoldForHandBack, EndHandBackRun: coordinator/migration_handback.go).
type HandBackCoordinator interface {
	// Clock is the coordinator's: the checks' interval and the answer
	// timeout run on it, as the members' sessions do.
	coordinator.Clock
	StartHandBackRun(groupID string, every time.Duration, start func(*coordinator.HandBackRun))
	HoldForHandBack(groupID string, j coordinator.HeldJoin, held func(bool))
	EndHandBackRun(groupID string, run *coordinator.HandBackRun, done func([]coordinator.HeldJoin))
	BeginHandBack(groupID string, onBarrier func(streams.HandBackState), done func(error))
	AbortHandBack(groupID string, done func())
	FinishHandBack(groupID string, done func(error))
}

// HandBack runs the hand-back of a streams group whose members are all
// classic to the upstream's classic group (doc.go, "Hand-back"). The
// translator tells it of the classic Heartbeats it answers and hands it the
// JoinGroups the coordinator holds at a barrier (translate.HandBack).
type HandBack struct {
	Coordinator HandBackCoordinator
	Upstream    HandBackUpstream
	Migration   MigrationConfig
	// Translator serves the held JoinGroups of a hand-back given up.
	Translator *translate.Translator
	// Events hears the hand-back's phases (events.go).
	Events Events
}

// handBackCheckInterval is how often, at most, a migrating group's classic
// Heartbeats check whether the group can be handed back.
const handBackCheckInterval = 500 * time.Millisecond

// AfterHeartbeat implements translate.HandBack: it starts a hand-back of a
// group whose members are all classic, if its policy allows downgrade. It
// runs after a classic Heartbeat. The check and the run are the group's, on
// its coordinator executor (StartHandBackRun: the check and the run's start
// are one work, at most once per handBackCheckInterval while the group has
// a migration state, on the coordinator's clock). The coordinator tells the
// run when its barrier ends (stepHandBack).
func (h *HandBack) AfterHeartbeat(group string) {
	if !h.Migration.PolicyFor(group).AllowsDowngrade() {
		return
	}
	hc := h.Coordinator
	hc.StartHandBackRun(group, handBackCheckInterval, func(run *coordinator.HandBackRun) {
		onBarrier := func(st streams.HandBackState) { h.stepHandBack(group, run, st) }
		tell(h.Events, EventHandBackStarted, group, nil, nil)
		hc.BeginHandBack(group, onBarrier, func(err error) {
			if err != nil {
				tell(h.Events, EventHandBackFailed, group, err, nil)
				h.endHandBack(group, run, serveAll)
			}
		})
	})
}

// Hold implements translate.HandBack: it parks a JoinGroup the coordinator
// answered with ErrHandBackHeld. If no hand-back of the group runs here (a
// restarted proxy), the join is run again after the barrier is taken down;
// if the group was handed back meanwhile, it goes upstream as the held ones
// did.
func (h *HandBack) Hold(j translate.HeldJoin) {
	group := j.Req.Group
	h.Coordinator.HoldForHandBack(group, h.held(j), func(held bool) {
		if held {
			return
		}
		fwd := func(kmsg.Request, func(kmsg.Response)) { h.forwardHeld(j, nil) }
		h.Coordinator.AbortHandBack(group, func() { h.Translator.JoinGroup(j.Req, j.Client, j.Respond, j.Create, fwd) })
	})
}

// held is j as a group's run keeps it: forwarded upstream (forwardHeld)
// once the group is handed back, served by the translator again if the
// barrier is taken down.
func (h *HandBack) held(j translate.HeldJoin) coordinator.HeldJoin {
	return coordinator.HeldJoin{
		Timeout:  time.Duration(max(j.Req.RebalanceTimeoutMillis, j.Req.SessionTimeoutMillis)) * time.Millisecond,
		Upstream: func(answered func()) { h.forwardHeld(j, answered) },
		Serve:    func() { h.Translator.JoinGroup(j.Req, j.Client, j.Respond, j.Create, j.Forward) },
	}
}

// stepHandBack acts on the end of the barrier, as the coordinator tells it
// (BeginHandBack's onBarrier): ready → anchor leaves, group deleted, held
// joins forwarded upstream with an empty member id; aborted (a streams
// member joined), gone or failed → barrier down, held joins served here.
func (h *HandBack) stepHandBack(group string, run *coordinator.HandBackRun, st streams.HandBackState) {
	if !st.Ready {
		tell(h.Events, EventHandBackFailed, group, fmt.Errorf("barrier ended without the group ready (a streams member joined, or the group is gone)"), nil)
		h.abortHandBack(group, run)
		return
	}
	h.Upstream.LeaveAnchor(group, func(err error) {
		if err != nil {
			tell(h.Events, EventHandBackFailed, group, fmt.Errorf("anchor leave: %w", err), nil)
			h.abortHandBack(group, run)
			return
		}
		tell(h.Events, EventHandBackAnchorLeft, group, nil, nil)
		h.Coordinator.FinishHandBack(group, func(err error) {
			if err != nil {
				// A streams member came in the meantime.
				tell(h.Events, EventHandBackFailed, group, err, nil)
				h.abortHandBack(group, run)
				h.Upstream.HandBackDone(group)
				return
			}
			h.endHandBack(group, run, func(held []coordinator.HeldJoin) {
				tell(h.Events, EventHandBackDone, group, nil, map[string]any{"heldJoins": len(held)})
				h.forwardAllHeld(group, held)
			})
		})
	})
}

func (h *HandBack) abortHandBack(group string, run *coordinator.HandBackRun) {
	h.Coordinator.AbortHandBack(group, func() {
		h.endHandBack(group, run, serveAll)
	})
}

// serveAll serves the held joins here again, in arrival order.
func serveAll(held []coordinator.HeldJoin) {
	for _, j := range held {
		j.Serve()
	}
}

// endHandBack ends the group's run and gives its held joins to done (on
// the group's queue: done must not block).
func (h *HandBack) endHandBack(group string, run *coordinator.HandBackRun, done func([]coordinator.HeldJoin)) {
	h.Coordinator.EndHandBackRun(group, run, done)
}

// handBackAnswerSlack is how long past the longest rebalance timeout of the
// held joins a hand-back waits for their upstream answers before it calls
// HandBackDone anyway (a client that went away never gets its answer).
const handBackAnswerSlack = 10 * time.Second

// forwardAllHeld sends the held JoinGroups of a finished hand-back upstream
// and calls Upstream.HandBackDone once all are answered, or after their
// longest rebalance timeout plus handBackAnswerSlack.
func (h *HandBack) forwardAllHeld(group string, held []coordinator.HeldJoin) {
	var once sync.Once
	done := func() { once.Do(func() { h.Upstream.HandBackDone(group) }) }
	if len(held) == 0 {
		done()
		return
	}
	var mu sync.Mutex
	pending := len(held)
	var longest time.Duration
	for _, j := range held {
		longest = max(longest, j.Timeout)
	}
	h.Coordinator.AfterFunc(longest+handBackAnswerSlack, done)
	for _, j := range held {
		j.Upstream(func() {
			mu.Lock()
			pending--
			last := pending == 0
			mu.Unlock()
			if last {
				done()
			}
		})
	}
}

// forwardHeld sends a held JoinGroup upstream on the member's own
// connection with an empty member id: the broker answers MEMBER_ID_REQUIRED
// with a member id of its own ("<client.id>-<uuid>", under the client's
// principal), and Kafka Streams rejoins with it, owning nothing (it revoked
// its tasks at the barrier). answered, if not nil, is called once the answer is in.
func (h *HandBack) forwardHeld(j translate.HeldJoin, answered func()) {
	req := *j.Req
	if h.Translator != nil {
		// The member may send this join again (its hop to this owner
		// ended first): it goes upstream without the id too.
		h.Translator.HandedBack(req.MemberID, time.Duration(max(req.RebalanceTimeoutMillis, req.SessionTimeoutMillis))*time.Millisecond+handBackAnswerSlack)
	}
	req.MemberID = ""
	var onAnswer func(kmsg.Response)
	if answered != nil {
		onAnswer = func(kmsg.Response) { answered() }
	}
	j.Forward(&req, onAnswer)
}
