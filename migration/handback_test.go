package migration

import (
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/internal/classictest"
	"github.com/streamshift/streamshift/translate"
)

type fakeUpstream struct {
	mu   sync.Mutex
	left []string
	done []string
}

func (f *fakeUpstream) LeaveAnchor(group string, done func(error)) {
	f.mu.Lock()
	f.left = append(f.left, group)
	f.mu.Unlock()
	done(nil)
}

func (f *fakeUpstream) HandBackDone(group string) {
	f.mu.Lock()
	f.done = append(f.done, group)
	f.mu.Unlock()
}

// memberConn is a classic member's connection through the proxy: what the
// translator forwards on it goes to a broker that answers a JoinGroup
// without a member id with MEMBER_ID_REQUIRED and an id of its own.
type memberConn struct {
	t         *testing.T
	mu        sync.Mutex
	forwarded []kmsg.Request
	answers   chan kmsg.Response
}

func newMemberConn(t *testing.T) *memberConn {
	return &memberConn{t: t, answers: make(chan kmsg.Response, 4)}
}

func (c *memberConn) respond(r kmsg.Response) { c.answers <- r }

func (c *memberConn) forward(rewritten kmsg.Request, answered func(kmsg.Response)) {
	c.mu.Lock()
	c.forwarded = append(c.forwarded, rewritten)
	c.mu.Unlock()
	j, ok := rewritten.(*kmsg.JoinGroupRequest)
	if !ok {
		c.t.Errorf("forwarded %T as it came, want a rewritten JoinGroup", rewritten)
		return
	}
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.ErrorCode, resp.MemberID, resp.Generation = kerr.MemberIDRequired.Code, "cc-upstream-uuid", -1
	if j.MemberID != "" {
		resp.ErrorCode = kerr.UnknownMemberID.Code
	}
	if answered != nil {
		answered(resp)
	}
	c.answers <- resp
}

// barrierWatch is the coordinator, telling up when a hand-back's barrier is
// up.
type barrierWatch struct {
	*coordinator.Coordinator
	up chan struct{}
}

func (b barrierWatch) BeginHandBack(group string, onBarrier func(streams.HandBackState), done func(error)) {
	b.Coordinator.BeginHandBack(group, onBarrier, func(err error) {
		done(err)
		if err == nil {
			b.up <- struct{}{}
		}
	})
}

// handBackFixture is a coordinator in virtual time with a streams member
// holding the 4 tasks of "foo" in group "app", a translator with the
// hand-back on (a fakeUpstream), and that many classic members joined to
// the group (member ids "cc-id1", "cc-id2", ...); it returns their
// generations and a channel that gets a value each time a barrier goes up.
func handBackFixture(t *testing.T, members int) (*translate.Translator, *coordinator.Coordinator, *coordinator.ManualClock, *fakeUpstream, []int32, <-chan struct{}) {
	t.Helper()
	c, clock := classictest.StreamsGroup(t)
	up := &fakeUpstream{}
	barrierUp := make(chan struct{}, 4)
	hb := &HandBack{Coordinator: barrierWatch{Coordinator: c, up: barrierUp}, Upstream: up}
	tr := translate.New(translate.Options{Coordinator: c, HandBack: hb, NewMemberID: classictest.MemberIDs()})
	hb.Translator = tr
	var gens []int32
	for range members {
		r, _ := classictest.Call(t, tr.Handle, classictest.JoinRequest(t, 9, "", "stream"))
		id := r.(*kmsg.JoinGroupResponse).MemberID
		r, _ = classictest.Call(t, tr.Handle, classictest.JoinRequest(t, 9, id, "stream"))
		if j := r.(*kmsg.JoinGroupResponse); j.ErrorCode != 0 {
			t.Fatalf("classic join of %s: %d", id, j.ErrorCode)
		}
		gens = append(gens, r.(*kmsg.JoinGroupResponse).Generation)
	}
	return tr, c, clock, up, gens, barrierUp
}

// lastStreamsMemberLeaves: s1 leaves group "app"; member id's next classic
// Heartbeat (at generation gen) is told to rejoin and puts the hand-back's
// barrier up.
func lastStreamsMemberLeaves(t *testing.T, tr *translate.Translator, c *coordinator.Coordinator, id string, gen int32, barrierUp <-chan struct{}) {
	t.Helper()
	classictest.StreamsHeartbeat(t, c, "s1", -1, nil)
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID, hb.Generation = 4, "app", id, gen
	r, _ := classictest.Call(t, tr.Handle, hb)
	if code := r.(*kmsg.HeartbeatResponse).ErrorCode; code != kerr.RebalanceInProgress.Code {
		t.Fatalf("heartbeat: %d", code)
	}
	<-barrierUp
}

// queued returns once the coordinator ran everything queued for group "app"
// before it, and so told whatever barrier's end that work caused.
func queued(c *coordinator.Coordinator) {
	done := make(chan struct{})
	c.HandBack("app", func(streams.HandBackState) { close(done) })
	<-done
}

// answerWait bounds the tests' waits for an answer the hand-back gives at
// once once told; it is never reached unless the test fails.
const answerWait = 5 * time.Second

// answer is the next answer on conn, failing the test after answerWait.
func (c *memberConn) answer(what string) *kmsg.JoinGroupResponse {
	c.t.Helper()
	select {
	case r := <-c.answers:
		return r.(*kmsg.JoinGroupResponse)
	case <-time.After(answerWait):
		c.t.Fatalf("%s never answered", what)
		return nil
	}
}

// noAnswer fails the test if conn has an answer.
func (c *memberConn) noAnswer(what string) {
	c.t.Helper()
	select {
	case r := <-c.answers:
		c.t.Fatalf("%s answered: %+v", what, r)
	default:
	}
}

// handedBackUpstream checks that the anchor left once, the group is gone
// here, and conn's JoinGroup went upstream once, with an empty member id,
// and got the broker's MEMBER_ID_REQUIRED.
func handedBackUpstream(t *testing.T, c *coordinator.Coordinator, up *fakeUpstream, conn *memberConn, j *kmsg.JoinGroupResponse) {
	t.Helper()
	if j.ErrorCode != kerr.MemberIDRequired.Code || j.MemberID != "cc-upstream-uuid" {
		t.Fatalf("upstream answer %+v", j)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	conn.mu.Lock()
	defer conn.mu.Unlock()
	if len(up.left) != 1 || len(conn.forwarded) != 1 || conn.forwarded[0].(*kmsg.JoinGroupRequest).MemberID != "" {
		t.Fatalf("anchor left %v, forwarded on the member's connection %+v", up.left, conn.forwarded)
	}
	if c.Owns("app") {
		t.Fatal("group still held here")
	}
}

// The last streams member leaves; the classic member is pulled into the
// barrier, an instance starting meanwhile has its JoinGroup held outside
// the barrier, the member's own held JoinGroup completes the barrier, the
// anchor leaves, and both JoinGroups go upstream with an empty member id.
func TestHandBackToUpstream(t *testing.T) {
	tr, c, clock, up, gens, barrierUp := handBackFixture(t, 1)
	lastStreamsMemberLeaves(t, tr, c, "cc-id1", gens[0], barrierUp)

	// An instance starting meanwhile learns a member id here, then its
	// join is held too, to go upstream without that id.
	r, _ := classictest.Call(t, tr.Handle, classictest.JoinRequest(t, 9, "", "stream"))
	newcomerID := r.(*kmsg.JoinGroupResponse).MemberID
	newcomer := newMemberConn(t)
	tr.Handle(classictest.JoinRequest(t, 9, newcomerID, "stream"), streams.ClientInfo{ClientID: "cc"}, newcomer.respond, newcomer.forward)
	queued(c)
	newcomer.noAnswer("the newcomer's join during the barrier")

	// The member's join is held. s1, the last streams member, left for
	// good: kept for a successor of its process (coordinator/streams/
	// departed.go) that does not come, it goes at the session timeout,
	// which completes the barrier: the coordinator says so, and the
	// hand-back runs at once.
	conn := newMemberConn(t)
	tr.Handle(classictest.JoinRequest(t, 9, "cc-id1", "stream"), streams.ClientInfo{ClientID: "cc"}, conn.respond, conn.forward)
	queued(c)
	conn.noAnswer("the held join while s1 may still have a successor")
	clock.Advance(streams.DefaultSessionTimeout)
	if j := newcomer.answer("the newcomer's held join"); j.ErrorCode != kerr.MemberIDRequired.Code || j.MemberID != "cc-upstream-uuid" {
		t.Fatalf("newcomer's upstream answer %+v", j)
	}
	handedBackUpstream(t, c, up, conn, conn.answer("the held join"))
	conn.noAnswer("the held join, a second time")
	// Every held join answered: the hand-back is done once, and the
	// answer timeout passing later does not say it again.
	clock.Advance(2*time.Minute + handBackAnswerSlack)
	up.mu.Lock()
	defer up.mu.Unlock()
	if len(up.done) != 1 {
		t.Fatalf("hand-back done reported %d times, want once after the answer", len(up.done))
	}
}

// oneOfTwoHeld is handBackFixture with two classic members, the barrier
// up and the JoinGroup of cc-id1 (on conn) held, cc-id2 not rejoined yet.
func oneOfTwoHeld(t *testing.T) (*coordinator.Coordinator, *coordinator.ManualClock, *fakeUpstream, []int32, *memberConn) {
	t.Helper()
	tr, c, clock, up, gens, barrierUp := handBackFixture(t, 2)
	lastStreamsMemberLeaves(t, tr, c, "cc-id1", gens[0], barrierUp)
	conn := newMemberConn(t)
	tr.Handle(classictest.JoinRequest(t, 9, "cc-id1", "stream"), streams.ClientInfo{ClientID: "cc"}, conn.respond, conn.forward)
	queued(c)
	conn.noAnswer("the held join, with cc-id2 still to rejoin")
	return c, clock, up, gens, conn
}

// The barrier's last member not held is fenced by its session timer, with
// no request arriving: the fencing ends the barrier, the coordinator says
// so, and the held JoinGroup goes upstream. (Without that signal nothing
// would look at the barrier again: the held join would never be answered.)
func TestHandBackEndedByFencing(t *testing.T) {
	c, clock, up, _, conn := oneOfTwoHeld(t)
	// cc-id2 stays silent: its 10 s session runs out; then the group's
	// session timeout ends s1's wait for a successor (departed.go).
	clock.Advance(10 * time.Second)
	queued(c)
	conn.noAnswer("the held join while s1 may still have a successor")
	clock.Advance(streams.DefaultSessionTimeout - 10*time.Second)
	handedBackUpstream(t, c, up, conn, conn.answer("the held join after cc-id2 was fenced"))
}

// A streams member joining during the barrier aborts the hand-back: the held
// JoinGroup is served by the streams group, nothing goes upstream.
func TestHandBackAbortedByStreamsJoin(t *testing.T) {
	c, _, up, gens, conn := oneOfTwoHeld(t)
	// A new streams member arrives before the barrier completes.
	classictest.StreamsHeartbeat(t, c, "s2", 0, []string{"foo"})
	if j := conn.answer("the held join"); j.ErrorCode != 0 || j.MemberID != "cc-id1" || j.Generation < gens[0] {
		t.Fatalf("re-run join: %+v", j)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	conn.mu.Lock()
	defer conn.mu.Unlock()
	if len(up.left) != 0 || len(conn.forwarded) != 0 || len(up.done) != 0 || !c.Owns("app") {
		t.Fatalf("aborted hand-back touched the upstream: %v %v", up.left, conn.forwarded)
	}
}
