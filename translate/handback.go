package translate

import (
	"errors"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
)

// Upstream is what a hand-back needs of the proxy's upstream side. Its
// methods may be called on a coordinator group's goroutine: they must not
// block (start the I/O and call back later).
type Upstream interface {
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
	ClassicOnly(groupID string, done func(bool))
	BeginHandBack(groupID string, onBarrier func(coordinator.HandBackState), done func(error))
	AbortHandBack(groupID string, done func())
	FinishHandBack(groupID string, done func(error))
}

// heldJoin is a classic JoinGroup parked by a hand-back barrier.
type heldJoin struct {
	req     *kmsg.JoinGroupRequest
	client  coordinator.ClientInfo
	respond func(*kmsg.JoinGroupResponse)
	forward Forward
}

// handBackRun is one group's hand-back in progress.
type handBackRun struct {
	held []heldJoin
	done bool
}

// handBackCheckInterval is how often, at most, a group's classic Heartbeats
// ask the coordinator whether the group can be handed back.
const handBackCheckInterval = 500 * time.Millisecond

// maybeHandBack starts a hand-back of a group whose members are all classic,
// if its policy allows downgrade and the translator has an upstream. It
// runs after a classic Heartbeat, at most once per handBackCheckInterval per
// group (on the coordinator's clock). The coordinator tells the run when
// its barrier ends (stepHandBack).
func (t *Translator) maybeHandBack(group string) {
	hc, ok := t.c.(HandBackCoordinator)
	if !ok || t.opts.Upstream == nil || !t.opts.Migration.PolicyFor(group).AllowsDowngrade() {
		return
	}
	now := t.c.Now()
	t.mu.Lock()
	if t.handBacks[group] != nil || now.Sub(t.lastHandBackCheck[group]) < handBackCheckInterval {
		t.mu.Unlock()
		return
	}
	t.lastHandBackCheck[group] = now
	t.mu.Unlock()
	hc.ClassicOnly(group, func(only bool) {
		if !only {
			return
		}
		t.mu.Lock()
		if t.handBacks[group] != nil {
			t.mu.Unlock()
			return
		}
		run := &handBackRun{}
		t.handBacks[group] = run
		t.mu.Unlock()
		onBarrier := func(st coordinator.HandBackState) { t.stepHandBack(group, run, st) }
		hc.BeginHandBack(group, onBarrier, func(err error) {
			if err != nil {
				t.endHandBack(group, run)
			}
		})
	})
}

// hold parks a JoinGroup the coordinator answered with ErrHandBackHeld. If
// no hand-back of the group runs here (a restarted proxy), the join is run
// again after the barrier is taken down.
func (t *Translator) hold(group string, j heldJoin) {
	t.mu.Lock()
	run := t.handBacks[group]
	if run != nil && !run.done {
		run.held = append(run.held, j)
		t.mu.Unlock()
		return
	}
	t.mu.Unlock()
	if hc, ok := t.c.(HandBackCoordinator); ok {
		// If the group was handed back meanwhile, the join goes upstream
		// as the held ones did.
		fwd := j.forward
		if t.opts.Upstream != nil {
			fwd = func(kmsg.Request, func(kmsg.Response)) { t.forwardHeld(j, nil) }
		}
		hc.AbortHandBack(group, func() { t.JoinGroup(j.req, j.client, j.respond, fwd) })
		return
	}
	resp := joinResponse(j.req)
	resp.ErrorCode, resp.MemberID, resp.Generation = kerr.RebalanceInProgress.Code, j.req.MemberID, -1
	j.respond(resp)
}

// stepHandBack acts on the end of the barrier, as the coordinator tells it
// (BeginHandBack's onBarrier): ready → anchor leaves, group deleted, held
// joins forwarded upstream with an empty member id; aborted (a streams
// member joined), gone or failed → barrier down, held joins served here.
func (t *Translator) stepHandBack(group string, run *handBackRun, st coordinator.HandBackState) {
	if !st.Ready {
		t.abortHandBack(group, run)
		return
	}
	hc := t.c.(HandBackCoordinator)
	t.opts.Upstream.LeaveAnchor(group, func(err error) {
		if err != nil {
			t.abortHandBack(group, run)
			return
		}
		hc.FinishHandBack(group, func(err error) {
			if err != nil {
				// A streams member came in the meantime.
				t.abortHandBack(group, run)
				t.opts.Upstream.HandBackDone(group)
				return
			}
			t.forwardAllHeld(group, t.endHandBack(group, run))
		})
	})
}

func (t *Translator) abortHandBack(group string, run *handBackRun) {
	t.c.(HandBackCoordinator).AbortHandBack(group, func() {
		for _, j := range t.endHandBack(group, run) {
			t.JoinGroup(j.req, j.client, j.respond, j.forward)
		}
	})
}

// endHandBack forgets the run and returns its held joins.
func (t *Translator) endHandBack(group string, run *handBackRun) []heldJoin {
	t.mu.Lock()
	defer t.mu.Unlock()
	run.done = true
	if t.handBacks[group] == run {
		delete(t.handBacks, group)
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
func (t *Translator) forwardAllHeld(group string, held []heldJoin) {
	var once sync.Once
	done := func() { once.Do(func() { t.opts.Upstream.HandBackDone(group) }) }
	if len(held) == 0 {
		done()
		return
	}
	var mu sync.Mutex
	pending := len(held)
	var longest time.Duration
	for _, j := range held {
		longest = max(longest, time.Duration(max(j.req.RebalanceTimeoutMillis, j.req.SessionTimeoutMillis))*time.Millisecond)
	}
	t.c.AfterFunc(longest+handBackAnswerSlack, done)
	for _, j := range held {
		t.forwardHeld(j, func() {
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
// principal), and Kafka Streams rejoins with it keeping its tasks and
// generation. answered, if not nil, is called once the answer is in.
func (t *Translator) forwardHeld(j heldJoin, answered func()) {
	req := *j.req
	req.MemberID = ""
	var onAnswer func(kmsg.Response)
	if answered != nil {
		onAnswer = func(kmsg.Response) { answered() }
	}
	j.forward(&req, onAnswer)
}

func isHeld(err error) bool { return errors.Is(err, coordinator.ErrHandBackHeld) }
