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
type HandBackCoordinator interface {
	// Clock is the coordinator's: the checks' interval and the answer
	// timeout run on it, as the members' sessions do.
	coordinator.Clock
	ClassicOnly(groupID string, done func(bool))
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

	mu        sync.Mutex
	runs      map[string]*handBackRun
	lastCheck map[string]time.Time
}

// handBackRun is one group's hand-back in progress.
type handBackRun struct {
	held []translate.HeldJoin
	done bool
}

// handBackCheckInterval is how often, at most, a group's classic Heartbeats
// ask the coordinator whether the group can be handed back.
const handBackCheckInterval = 500 * time.Millisecond

// AfterHeartbeat implements translate.HandBack: it starts a hand-back of a
// group whose members are all classic, if its policy allows downgrade. It
// runs after a classic Heartbeat, at most once per handBackCheckInterval
// per group (on the coordinator's clock). The coordinator tells the run
// when its barrier ends (stepHandBack).
func (h *HandBack) AfterHeartbeat(group string) {
	if !h.Migration.PolicyFor(group).AllowsDowngrade() {
		return
	}
	now := h.Coordinator.Now()
	h.mu.Lock()
	if h.runs == nil {
		h.runs, h.lastCheck = map[string]*handBackRun{}, map[string]time.Time{}
	}
	if h.runs[group] != nil || now.Sub(h.lastCheck[group]) < handBackCheckInterval {
		h.mu.Unlock()
		return
	}
	h.lastCheck[group] = now
	h.mu.Unlock()
	hc := h.Coordinator
	hc.ClassicOnly(group, func(only bool) {
		if !only {
			return
		}
		h.mu.Lock()
		if h.runs[group] != nil {
			h.mu.Unlock()
			return
		}
		run := &handBackRun{}
		h.runs[group] = run
		h.mu.Unlock()
		onBarrier := func(st streams.HandBackState) { h.stepHandBack(group, run, st) }
		tell(h.Events, EventHandBackStarted, group, nil, nil)
		hc.BeginHandBack(group, onBarrier, func(err error) {
			if err != nil {
				tell(h.Events, EventHandBackFailed, group, err, nil)
				h.endHandBack(group, run)
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
	h.mu.Lock()
	run := h.runs[group]
	if run != nil && !run.done {
		run.held = append(run.held, j)
		h.mu.Unlock()
		return
	}
	h.mu.Unlock()
	fwd := func(kmsg.Request, func(kmsg.Response)) { h.forwardHeld(j, nil) }
	h.Coordinator.AbortHandBack(group, func() { h.Translator.JoinGroup(j.Req, j.Client, j.Respond, j.Create, fwd) })
}

// stepHandBack acts on the end of the barrier, as the coordinator tells it
// (BeginHandBack's onBarrier): ready → anchor leaves, group deleted, held
// joins forwarded upstream with an empty member id; aborted (a streams
// member joined), gone or failed → barrier down, held joins served here.
func (h *HandBack) stepHandBack(group string, run *handBackRun, st streams.HandBackState) {
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
			held := h.endHandBack(group, run)
			tell(h.Events, EventHandBackDone, group, nil, map[string]any{"heldJoins": len(held)})
			h.forwardAllHeld(group, held)
		})
	})
}

func (h *HandBack) abortHandBack(group string, run *handBackRun) {
	h.Coordinator.AbortHandBack(group, func() {
		for _, j := range h.endHandBack(group, run) {
			h.Translator.JoinGroup(j.Req, j.Client, j.Respond, j.Create, j.Forward)
		}
	})
}

// endHandBack forgets the run and returns its held joins.
func (h *HandBack) endHandBack(group string, run *handBackRun) []translate.HeldJoin {
	h.mu.Lock()
	defer h.mu.Unlock()
	run.done = true
	if h.runs[group] == run {
		delete(h.runs, group)
	}
	held := run.held
	run.held = nil
	return held
}

// handBackAnswerSlack is how long past the longest rebalance timeout of the
// held joins a hand-back waits for their upstream answers before it calls
// HandBackDone anyway (a client that went away never gets its answer).
const handBackAnswerSlack = 10 * time.Second

// forwardAllHeld sends the held JoinGroups of a finished hand-back upstream
// and calls Upstream.HandBackDone once all are answered, or after their
// longest rebalance timeout plus handBackAnswerSlack.
func (h *HandBack) forwardAllHeld(group string, held []translate.HeldJoin) {
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
		longest = max(longest, time.Duration(max(j.Req.RebalanceTimeoutMillis, j.Req.SessionTimeoutMillis))*time.Millisecond)
	}
	h.Coordinator.AfterFunc(longest+handBackAnswerSlack, done)
	for _, j := range held {
		h.forwardHeld(j, func() {
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
	req.MemberID = ""
	var onAnswer func(kmsg.Response)
	if answered != nil {
		onAnswer = func(kmsg.Response) { answered() }
	}
	j.Forward(&req, onAnswer)
}
