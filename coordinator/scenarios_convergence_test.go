package coordinator

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// Fast convergence (streams/heartbeat_interval.go), beyond Kafka 4.4.

// short is the default reconciliation heartbeat interval, in the response's unit.
const short = int32(streams.DefaultReconciliationHeartbeatInterval / time.Millisecond)

func TestHeartbeatIntervalWhileReconciling(t *testing.T) {
	h := twoMemberGroup(t, nil)
	g := h.group("g")
	r3 := h.ok(joinReq("g", "m3", "p3", sourceTopology("foo")))
	if r3.HeartbeatIntervalMillis != short {
		t.Fatalf("m3 waits for tasks: interval %d", r3.HeartbeatIntervalMillis)
	}
	r1 := h.ok(hbReq("g", "m1", 3, nil))
	if r1.HeartbeatIntervalMillis != short || g.Members["m1"].CurrentAssignment().State != streams.MemberUnrevokedTasks {
		t.Fatalf("m1 revokes: interval %d", r1.HeartbeatIntervalMillis)
	}
	h.settle("m1", "m2", "m3")
	if g.State() != streams.GroupStable {
		t.Fatalf("state %v", g.State())
	}
	for _, id := range []string{"m1", "m2", "m3"} {
		if r := h.ok(hbReq("g", id, g.Members[id].MemberEpoch(), nil)); r.HeartbeatIntervalMillis != 5000 {
			t.Fatalf("%s stable: interval %d", id, r.HeartbeatIntervalMillis)
		}
	}
}

// The owner of a task being warmed up elsewhere heartbeats fast too: it
// revokes the task as soon as the warm-up has caught up.
func TestHeartbeatIntervalWarmupOwner(t *testing.T) {
	h := statefulOneMember(t, nil)
	g := h.group("g")
	h.ok(joinReq("g", "m2", "p2", statefulTopology("foo")))
	h.settle("m1", "m2")
	for _, id := range []string{"m1", "m2"} {
		if r := h.ok(hbReq("g", id, g.Members[id].MemberEpoch(), nil)); r.HeartbeatIntervalMillis != short {
			t.Fatalf("%s during the warm-up: interval %d", id, r.HeartbeatIntervalMillis)
		}
	}
}

// MISSING_SOURCE_TOPICS keeps the configured interval (the client gives up
// after twice the interval), and equal intervals are Kafka 4.4's answer.
func TestHeartbeatIntervalKept(t *testing.T) {
	h := newHarness(t, nil)
	r := h.ok(joinReq("g", "m1", "p1", sourceTopology("missing")))
	if r.HeartbeatIntervalMillis != 5000 || statusCodes(r)[0] != streams.StatusMissingSourceTopics {
		t.Fatalf("missing source topics: interval %d, statuses %v", r.HeartbeatIntervalMillis, statusCodes(r))
	}
	h = twoMemberGroup(t, func(c *streams.Config) { c.Defaults.ReconciliationHeartbeatInterval = c.Defaults.HeartbeatInterval })
	if r := h.ok(joinReq("g", "m3", "p3", sourceTopology("foo"))); r.HeartbeatIntervalMillis != 5000 {
		t.Fatalf("4.4 setting: interval %d", r.HeartbeatIntervalMillis)
	}
}

// silentMemberGroup: the stable two-member group, m2 heartbeating last at
// the start (then silent until the test says otherwise).
func silentMemberGroup(t *testing.T) (*harness, *streams.Group, func(string) *kmsg.StreamsGroupHeartbeatResponse) {
	h := twoMemberGroup(t, nil)
	h.beatAsAssigned("m2")
	return h, h.group("g"), h.beatAsAssigned
}

// A member killed without leaving: the survivor's heartbeat that would come
// after its session expiry is brought just after it
// (streams/heartbeat_session_expiry.go), so the survivor takes over its
// tasks within the short interval of the fencing, not at its next regular
// heartbeat as in Kafka 4.4, for one extra heartbeat.
func TestHeartbeatIntervalTimedToSessionExpiry(t *testing.T) {
	h, g, beat := silentMemberGroup(t)
	// m2 is killed; m1 heartbeats out of phase with it, at the interval it
	// is answered, as the client does.
	h.advance(2 * time.Second)
	expired := testStart.Add(streams.DefaultSessionTimeout)
	var tookOver time.Time
	beats := 0
	for tookOver.IsZero() && h.clock.Now().Before(expired.Add(10*time.Second)) {
		r := beat("m1")
		beats++
		if got, ok := assigned(r); ok && streams.TasksEqual(got.Active, tasks("0", 0, 1, 2, 3, 4, 5)) {
			tookOver = h.clock.Now()
			break
		}
		h.advance(time.Duration(r.HeartbeatIntervalMillis) * time.Millisecond)
	}
	if g.Members["m2"] != nil || tookOver.IsZero() || tookOver.Sub(expired) > streams.DefaultReconciliationHeartbeatInterval {
		t.Fatalf("m2's session expired at %v, m1 took over its tasks at %v", expired, tookOver)
	}
	// 2 s, 7 s, …, 42 s at the configured interval, then just after 45 s.
	if beats != 10 {
		t.Fatalf("m1 heartbeated %d times", beats)
	}
}

// A member that is only late is not waited for: once it heartbeats again
// the others are answered the configured interval.
func TestHeartbeatIntervalLateMemberBack(t *testing.T) {
	h, g, beat := silentMemberGroup(t)
	h.advance(42 * time.Second)
	if r := beat("m1"); r.HeartbeatIntervalMillis != 3000+short {
		t.Fatalf("m2's session expires in 3 s: m1 interval %d", r.HeartbeatIntervalMillis)
	}
	h.advance(time.Second)
	if r := beat("m2"); r.HeartbeatIntervalMillis != 5000 {
		t.Fatalf("m2 back: its interval %d", r.HeartbeatIntervalMillis)
	}
	h.advance(2*time.Second + streams.DefaultReconciliationHeartbeatInterval)
	if r := beat("m1"); r.HeartbeatIntervalMillis != 5000 || g.Members["m2"] == nil {
		t.Fatalf("m2 back: m1 interval %d", r.HeartbeatIntervalMillis)
	}
}

// convergenceSim runs members heartbeating as the Streams client does (at
// the answered interval, at once after a change of assignment: its
// acknowledgement) in virtual time, in a group of stateless tasks.
type convergenceSim struct {
	tb      testing.TB
	h       *harness
	clients []*convergenceClient
	beats   int // heartbeats the coordinator served
}

type convergenceClient struct {
	id         string
	epoch      int32
	owned      streams.TaskSets
	next, last time.Time
}

func newConvergenceSim(tb testing.TB, partitions int, fast bool) *convergenceSim {
	cfg := streams.DefaultConfig()
	cfg.Defaults.InitialRebalanceDelay, cfg.Defaults.AssignmentInterval = 0, 0
	if !fast {
		cfg.Defaults.ReconciliationHeartbeatInterval = cfg.Defaults.HeartbeatInterval
	}
	h := &harness{clock: NewManualClock(testStart), log: &recordingLog{MemoryLog: NewMemoryLog()}, md: NewStaticMetadata(), creator: &fakeCreator{}}
	c, err := New(Options{Config: cfg, Clock: h.clock, Log: h.log, Metadata: h.md, CreateTopics: true, Assignor: testAssignor{}})
	if err != nil {
		tb.Fatal(err)
	}
	c.inline = true
	h.c = c
	h.md.SetTopic("foo", int32(partitions))
	return &convergenceSim{tb: tb, h: h}
}

func (s *convergenceSim) beat(c *convergenceClient, join bool) {
	req := hbReq("g", c.id, c.epoch, &c.owned)
	if join {
		req = joinReq("g", c.id, "p-"+c.id, sourceTopology("foo"))
	}
	resp := s.h.rawHeartbeat(req)
	s.beats++
	if resp.ErrorCode != 0 {
		s.tb.Fatalf("%s: error %d", c.id, resp.ErrorCode)
	}
	c.epoch, c.last = resp.MemberEpoch, s.h.clock.Now()
	c.next = c.last.Add(time.Duration(resp.HeartbeatIntervalMillis) * time.Millisecond)
	if got, ok := assigned(resp); ok {
		changed := !got.Equal(c.owned)
		c.owned = got
		if changed {
			c.next = c.last // the acknowledgement goes out at once
		}
	}
}

func (s *convergenceSim) join(id string) *convergenceClient {
	c := &convergenceClient{id: id}
	s.clients = append(s.clients, c)
	s.beat(c, true)
	return c
}

// step runs the next heartbeat due, if it is due before until.
func (s *convergenceSim) step(until time.Time) bool {
	sort.SliceStable(s.clients, func(i, j int) bool { return s.clients[i].next.Before(s.clients[j].next) })
	c := s.clients[0]
	if c.next.After(until) {
		return false
	}
	if d := c.next.Sub(s.h.clock.Now()); d > 0 {
		s.h.clock.Advance(d)
	}
	s.beat(c, false)
	return true
}

// runUntil runs the heartbeats due before until, then lets time pass to it.
func (s *convergenceSim) runUntil(until time.Time) {
	for s.step(until) {
	}
	s.h.clock.Advance(until.Sub(s.h.clock.Now()))
}

// runUntilStable runs heartbeats until the group is stable and done holds.
func (s *convergenceSim) runUntilStable(done func(*streams.Group) bool) {
	g, start := s.h.group("g"), s.h.clock.Now()
	for g.State() != streams.GroupStable || !done(g) {
		s.step(start.Add(time.Hour))
		if s.h.clock.Now().Sub(start) > 5*time.Minute {
			s.tb.Fatal("no convergence")
		}
	}
}

// simulateScaleOut: members join one by one; it returns how long the group
// took to become stable after the last join and how many heartbeats the
// coordinator served.
func simulateScaleOut(tb testing.TB, members, partitions int, fast bool) (time.Duration, int) {
	s := newConvergenceSim(tb, partitions, fast)
	s.joinOneByOne(members)
	lastJoin := s.h.clock.Now()
	s.runUntilStable(func(*streams.Group) bool { return true })
	return s.h.clock.Now().Sub(lastJoin), s.beats
}

func (s *convergenceSim) joinOneByOne(members int) {
	for i := range members {
		s.join(fmt.Sprintf("m%02d", i))
		if i < members-1 {
			// The next member joins out of phase with the others'
			// heartbeats, as a real one does.
			s.runUntil(s.h.clock.Now().Add(20*time.Second + time.Duration(1+(i*37)%49)*100*time.Millisecond))
		}
	}
}

// simulateKill: a stable group of members loses one without a leave (kill
// -9); it returns how long after its session expired the group was stable
// again without it, and the heartbeats served from the kill on.
func simulateKill(tb testing.TB, members, partitions int, fast bool) (time.Duration, int) {
	s := newConvergenceSim(tb, partitions, fast)
	s.joinOneByOne(members)
	s.runUntilStable(func(*streams.Group) bool { return true })
	s.runUntil(s.h.clock.Now().Add(7300 * time.Millisecond))
	victim := s.clients[len(s.clients)/2]
	s.clients = slices.DeleteFunc(s.clients, func(c *convergenceClient) bool { return c == victim })
	expired := victim.last.Add(streams.DefaultSessionTimeout)
	s.beats = 0
	s.runUntilStable(func(g *streams.Group) bool { return g.Members[victim.id] == nil })
	return s.h.clock.Now().Sub(expired), s.beats
}

// rawHeartbeat heartbeats without a test to fail (the simulation's harness).
func (h *harness) rawHeartbeat(req *kmsg.StreamsGroupHeartbeatRequest) *kmsg.StreamsGroupHeartbeatResponse {
	var resp *kmsg.StreamsGroupHeartbeatResponse
	h.c.Heartbeat(req, streams.ClientInfo{ClientID: "client-" + req.MemberID, ClientHost: "/127.0.0.1"}, HeartbeatOptions{}, func(r HeartbeatResult) {
		resp = r.Response
		h.create(req.Group, r.CreatableTopics)
	})
	return resp
}

func TestFastConvergenceScaleOut(t *testing.T) {
	slow, slowBeats := simulateScaleOut(t, 3, 12, false)
	fast, fastBeats := simulateScaleOut(t, 3, 12, true)
	t.Logf("third member to stable: Kafka 4.4 intervals %v (%d heartbeats), fast convergence %v (%d heartbeats)", slow, slowBeats, fast, fastBeats)
	if fast >= slow {
		t.Fatalf("fast convergence %v, 4.4 intervals %v", fast, slow)
	}
}

func TestFastConvergenceKill(t *testing.T) {
	slow, slowBeats := simulateKill(t, 3, 12, false)
	fast, fastBeats := simulateKill(t, 3, 12, true)
	t.Logf("session expiry to stable: Kafka 4.4 intervals %v (%d heartbeats), fast convergence %v (%d heartbeats)", slow, slowBeats, fast, fastBeats)
	if fast > streams.DefaultReconciliationHeartbeatInterval || fast >= slow {
		t.Fatalf("fast convergence %v, 4.4 intervals %v", fast, slow)
	}
}

// BenchmarkFastConvergenceLoad reports, in virtual time, with and without
// the short interval: per scale-out of 10 members over 100 tasks the time
// to stable after the last join and the heartbeats served; per kill -9 of
// one of them the time from its session expiry to stable and the
// heartbeats served from the kill on. The load it adds is the extra
// heartbeats (each costs what BenchmarkHeartbeat measures).
func BenchmarkFastConvergenceLoad(b *testing.B) {
	for _, sim := range []struct {
		name string
		run  func(testing.TB, int, int, bool) (time.Duration, int)
	}{{"scale-out", simulateScaleOut}, {"kill", simulateKill}} {
		for _, fast := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/fast=%v", sim.name, fast), func(b *testing.B) {
				var took time.Duration
				beats := 0
				for range b.N {
					took, beats = sim.run(b, 10, 100, fast)
				}
				b.ReportMetric(float64(took.Milliseconds()), "virtual-ms-to-stable")
				b.ReportMetric(float64(beats), "heartbeats")
			})
		}
	}
}
