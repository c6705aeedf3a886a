package coordinator

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/coordinator/streams/assignor"
)

// Warm-up tasks (streams/warmup.go), beyond Kafka 4.4: a moved stateful
// active stays with its owner until the new member has caught up.

// offsetsReq is a heartbeat reporting changelog offset and end-offset sums
// of subtopology "0", partition -> sum.
func offsetsReq(group, member string, epoch int32, owned *streams.TaskSets, offsets, ends map[int32]int64) *kmsg.StreamsGroupHeartbeatRequest {
	r := hbReq(group, member, epoch, owned)
	r.TaskOffsets, r.TaskEndOffsets = []kmsg.TaskOffset{}, []kmsg.TaskOffset{}
	for p, o := range offsets {
		r.TaskOffsets = append(r.TaskOffsets, kmsg.TaskOffset{SubtopologyID: "0", Partition: p, Offset: o})
	}
	for p, o := range ends {
		r.TaskEndOffsets = append(r.TaskEndOffsets, kmsg.TaskOffset{SubtopologyID: "0", Partition: p, Offset: o})
	}
	return r
}

// statefulOneMember: m1 (p1) runs tasks 0-3 of a stateful subtopology,
// stable.
func statefulOneMember(t *testing.T, mut func(*streams.Config)) *harness {
	t.Helper()
	h := newHarness(t, mut)
	h.md.SetTopic("foo", 4)
	h.md.SetTopic("app-store-changelog", 4)
	r := h.ok(joinReq("g", "m1", "p1", statefulTopology("foo")))
	got, _ := assigned(r)
	if !streams.TasksEqual(got.Active, tasks("0", 0, 1, 2, 3)) {
		t.Fatalf("setup: m1 %+v", got)
	}
	h.ok(hbReq("g", "m1", r.MemberEpoch, &got))
	return h
}

// settle heartbeats m with what it was last given until its epoch and
// state no longer change.
func (h *harness) settle(ids ...string) {
	h.t.Helper()
	g := h.group("g")
	for range 4 {
		for _, id := range ids {
			if g.Members[id] != nil {
				h.beatAsAssigned(id)
			}
		}
	}
}

// beatAsAssigned heartbeats member id of group g at its epoch, owning what
// it was last given.
func (h *harness) beatAsAssigned(id string) *kmsg.StreamsGroupHeartbeatResponse {
	h.t.Helper()
	m := h.group("g").Members[id]
	owned := m.CurrentAssignment().Assigned
	return h.ok(hbReq("g", id, m.MemberEpoch(), &owned))
}

func TestWarmupAssignedLaggingCaughtUpPromoted(t *testing.T) {
	h := statefulOneMember(t, nil)
	g := h.group("g")
	r2 := h.ok(joinReq("g", "m2", "p2", statefulTopology("foo")))
	// The assignor moves 2 and 3 to m2, which has no state: they stay
	// active on m1 and m2 warms them up.
	if tg := g.Target["m1"]; !streams.TasksEqual(tg.Active, tasks("0", 0, 1, 2, 3)) {
		t.Fatalf("m1 target %+v", tg)
	}
	if tg := g.Target["m2"]; len(tg.Active) != 0 || !streams.TasksEqual(tg.Warmup, tasks("0", 2, 3)) {
		t.Fatalf("m2 target %+v", tg)
	}
	got, _ := assigned(r2)
	if !streams.TasksEqual(got.Warmup, tasks("0", 2, 3)) || len(got.Active) != 0 {
		t.Fatalf("m2 given %+v", got)
	}
	h.settle("m1", "m2")
	if g.State() != streams.GroupStable {
		t.Fatalf("state %v", g.State())
	}
	epoch := g.GroupEpoch
	owned := g.Members["m2"].CurrentAssignment().Assigned

	// Lagging: no new epoch.
	h.ok(offsetsReq("g", "m2", r2.MemberEpoch, &owned, map[int32]int64{2: 0, 3: 0}, map[int32]int64{2: 50_000, 3: 50_000}))
	if g.GroupEpoch != epoch {
		t.Fatalf("lagging warm-up bumped the epoch to %d", g.GroupEpoch)
	}
	// Task 2 within acceptable.recovery.lag (10000): a new epoch, and m2
	// gets task 2 as its active once m1 has revoked it.
	r := h.ok(offsetsReq("g", "m2", r2.MemberEpoch, &owned, map[int32]int64{2: 41_000, 3: 100}, map[int32]int64{2: 50_000, 3: 50_000}))
	if g.GroupEpoch != epoch+1 || g.AssignmentEpoch != epoch+1 {
		t.Fatalf("caught-up warm-up: epochs %d %d, want %d", g.GroupEpoch, g.AssignmentEpoch, epoch+1)
	}
	if tg := g.Target["m2"]; !streams.TasksEqual(tg.Active, tasks("0", 2)) || !streams.TasksEqual(tg.Warmup, tasks("0", 3)) {
		t.Fatalf("m2 target after catching up %+v", tg)
	}
	if tg := g.Target["m1"]; !streams.TasksEqual(tg.Active, tasks("0", 0, 1, 3)) {
		t.Fatalf("m1 target after catching up %+v", tg)
	}
	if got, ok := assigned(r); ok && streams.TasksContains(got.Active, "0", 2) {
		t.Fatalf("m2 got task 2 while m1 runs it: %+v", got)
	}
	r1 := h.ok(hbReq("g", "m1", g.Members["m1"].MemberEpoch(), nil))
	if got, _ := assigned(r1); !streams.TasksEqual(got.Active, tasks("0", 0, 1, 3)) {
		t.Fatalf("m1 asked to keep %+v", got)
	}
	h.settle("m1", "m2")
	if c := g.Members["m2"].CurrentAssignment(); !streams.TasksEqual(c.Assigned.Active, tasks("0", 2)) || !streams.TasksEqual(c.Assigned.Warmup, tasks("0", 3)) {
		t.Fatalf("m2 current %+v", c)
	}
	// Task 3 catches up too: the group ends balanced, without warm-ups.
	owned = g.Members["m2"].CurrentAssignment().Assigned
	h.ok(offsetsReq("g", "m2", g.Members["m2"].MemberEpoch(), &owned, map[int32]int64{3: 49_000}, map[int32]int64{3: 50_000}))
	h.settle("m1", "m2")
	if c := g.Members["m2"].CurrentAssignment(); !streams.TasksEqual(c.Assigned.Active, tasks("0", 2, 3)) || len(c.Assigned.Warmup) != 0 {
		t.Fatalf("m2 final %+v", c)
	}
	if c := g.Members["m1"].CurrentAssignment(); !streams.TasksEqual(c.Assigned.Active, tasks("0", 0, 1)) || g.State() != streams.GroupStable {
		t.Fatalf("m1 final %+v state %v", c, g.State())
	}
}

// A member reporting caught-up state on join (a restarted instance's
// on-disk state, KAFKA-20719) gets the active at once.
func TestWarmupNotNeededWhenCaughtUpOnJoin(t *testing.T) {
	h := statefulOneMember(t, nil)
	g := h.group("g")
	req := joinReq("g", "m2", "p2", statefulTopology("foo"))
	req.TaskOffsets = []kmsg.TaskOffset{{SubtopologyID: "0", Partition: 2, Offset: 5}, {SubtopologyID: "0", Partition: 3, Offset: 5}}
	req.TaskEndOffsets = []kmsg.TaskOffset{{SubtopologyID: "0", Partition: 2, Offset: 10}, {SubtopologyID: "0", Partition: 3, Offset: 10}}
	h.ok(req)
	if tg := g.Target["m2"]; !streams.TasksEqual(tg.Active, tasks("0", 2, 3)) || len(tg.Warmup) != 0 {
		t.Fatalf("m2 target %+v", tg)
	}
}

// streams.num.warmup.replicas caps the warm-ups of the whole group; 0 is
// Kafka 4.4's assignment.
func TestWarmupBudget(t *testing.T) {
	for _, budget := range []int{0, 1} {
		h := statefulOneMember(t, func(c *streams.Config) { c.Defaults.NumWarmupReplicas = budget })
		g := h.group("g")
		h.ok(joinReq("g", "m2", "p2", statefulTopology("foo")))
		h.ok(joinReq("g", "m3", "p3", statefulTopology("foo")))
		warmups := 0
		for _, tg := range g.Target {
			warmups += streams.TasksCount(tg.Warmup)
		}
		active := streams.TasksCount(g.Target["m1"].Active)
		switch budget {
		case 0:
			if warmups != 0 || active != 2 {
				t.Fatalf("budget 0: %d warm-ups, m1 %d actives: %+v", warmups, active, g.Target)
			}
		case 1:
			if warmups != 1 || active != 4 {
				t.Fatalf("budget 1: %d warm-ups, m1 %d actives: %+v", warmups, active, g.Target)
			}
		}
	}
}

// A warm-up member leaving frees its budget and the owner keeps the task.
func TestWarmupMemberLeaves(t *testing.T) {
	h := statefulOneMember(t, func(c *streams.Config) { c.Defaults.NumWarmupReplicas = 1 })
	g := h.group("g")
	h.ok(joinReq("g", "m2", "p2", statefulTopology("foo")))
	h.ok(joinReq("g", "m3", "p3", statefulTopology("foo")))
	warming := ""
	for id, tg := range g.Target {
		if len(tg.Warmup) > 0 {
			warming = id
		}
	}
	if warming == "" {
		t.Fatalf("no warm-up: %+v", g.Target)
	}
	h.ok(hbReq("g", warming, -1, nil))
	other := "m2"
	if warming == "m2" {
		other = "m3"
	}
	h.ok(hbReq("g", other, g.Members[other].MemberEpoch(), nil))
	if tg := g.Target[other]; streams.TasksCount(tg.Warmup) != 1 {
		t.Fatalf("%s did not get the freed warm-up: %+v", other, g.Target)
	}
	if streams.TasksCount(g.Target["m1"].Active) != 4 {
		t.Fatalf("m1 target %+v", g.Target["m1"])
	}
}

// Warm-ups are in the target records: a reloaded coordinator has them and
// promotes them when the member reports it caught up.
func TestWarmupSurvivesReload(t *testing.T) {
	h := statefulOneMember(t, nil)
	r2 := h.ok(joinReq("g", "m2", "p2", statefulTopology("foo")))
	h.settle("m1", "m2")

	h2 := &harness{t: t, clock: h.clock, log: h.log, md: h.md, creator: &fakeCreator{}}
	cfg := streams.DefaultConfig()
	cfg.Defaults.InitialRebalanceDelay, cfg.Defaults.AssignmentInterval = 0, 0
	c, err := New(Options{Config: cfg, Clock: h.clock, Log: h.log, Metadata: h.md, CreateTopics: true, Assignor: testAssignor{}})
	if err != nil {
		t.Fatal(err)
	}
	c.inline = true
	h2.c = c
	if err := c.Load(h.log.All()); err != nil {
		t.Fatal(err)
	}
	g := h2.group("g")
	if tg := g.Target["m2"]; !streams.TasksEqual(tg.Warmup, tasks("0", 2, 3)) {
		t.Fatalf("reloaded m2 target %+v", tg)
	}
	epoch := g.GroupEpoch
	owned := g.Members["m2"].CurrentAssignment().Assigned
	h2.ok(offsetsReq("g", "m2", r2.MemberEpoch, &owned, map[int32]int64{2: 900, 3: 900}, map[int32]int64{2: 1000, 3: 1000}))
	if g.GroupEpoch != epoch+1 || !streams.TasksEqual(g.Target["m2"].Active, tasks("0", 2, 3)) {
		t.Fatalf("after reload: epoch %d target %+v", g.GroupEpoch, g.Target["m2"])
	}
}

// Members of one process share its state directory: a task moving between
// them needs no warm-up (and a warm-up never lands beside its active).
func TestWarmupNotWithinProcess(t *testing.T) {
	h := statefulOneMember(t, nil)
	g := h.group("g")
	h.ok(joinReq("g", "m2", "p1", statefulTopology("foo")))
	for id, tg := range g.Target {
		if len(tg.Warmup) != 0 {
			t.Fatalf("%s warm-up within its process: %+v", id, g.Target)
		}
	}
	if !streams.TasksEqual(g.Target["m2"].Active, tasks("0", 2, 3)) {
		t.Fatalf("m2 target %+v", g.Target["m2"])
	}
}

// A stateless subtopology never needs a warm-up.
func TestWarmupNotForStatelessTasks(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 4)
	r := h.ok(joinReq("g", "m1", "p1", sourceTopology("foo")))
	got, _ := assigned(r)
	h.ok(hbReq("g", "m1", r.MemberEpoch, &got))
	h.ok(joinReq("g", "m2", "p2", sourceTopology("foo")))
	if tg := h.group("g").Target["m2"]; !streams.TasksEqual(tg.Active, tasks("0", 2, 3)) || len(tg.Warmup) != 0 {
		t.Fatalf("m2 target %+v", tg)
	}
}

// newStickyHarness is newHarness with the real sticky assignor.
func newStickyHarness(t *testing.T, mut func(*streams.Config)) *harness {
	t.Helper()
	h := newHarness(t, mut)
	cfg := streams.DefaultConfig()
	cfg.Defaults.InitialRebalanceDelay, cfg.Defaults.AssignmentInterval = 0, 0
	if mut != nil {
		mut(&cfg)
	}
	c, err := New(Options{Config: cfg, Clock: h.clock, Log: h.log, Metadata: h.md, CreateTopics: true, Assignor: assignor.StickyTaskAssignor{}})
	if err != nil {
		t.Fatal(err)
	}
	c.inline = true
	h.c = c
	return h
}

// With rack.aware.assignment.tags, a standby never shares its active's
// zone; the members join with their client tags.
func TestRackAwareStandbysInGroup(t *testing.T) {
	h := newStickyHarness(t, func(c *streams.Config) {
		c.Defaults.NumStandbyReplicas = 1
		c.Defaults.RackAwareAssignmentTags = []string{"zone"}
		c.Defaults.NumWarmupReplicas = 0 // the target is the assignor's
	})
	h.md.SetTopic("foo", 8)
	h.md.SetTopic("app-store-changelog", 8)
	zone := map[string]string{"m1": "a", "m2": "a", "m3": "b", "m4": "b"}
	for _, id := range []string{"m1", "m2", "m3", "m4"} {
		req := joinReq("g", id, "p-"+id, statefulTopology("foo"))
		req.ClientTags = []kmsg.StreamsGroupHeartbeatRequestClientTag{{Key: "zone", Value: zone[id]}}
		if r := h.ok(req); len(statusCodes(r)) != 0 {
			t.Fatalf("%s statuses %v", id, statusCodes(r))
		}
	}
	g := h.group("g")
	for p := int32(0); p < 8; p++ {
		var activeZone, standbyZone string
		for id, tg := range g.Target {
			if streams.TasksContains(tg.Active, "0", p) {
				activeZone = zone[id]
			}
			if streams.TasksContains(tg.Standby, "0", p) {
				standbyZone = zone[id]
			}
		}
		if activeZone == "" || standbyZone == "" || activeZone == standbyZone {
			t.Fatalf("task %d: active in %q, standby in %q: %+v", p, activeZone, standbyZone, g.Target)
		}
	}
	// A member without the tag is told so (MISSING_CLIENT_TAGS), as before.
	r := h.ok(joinReq("g", "m5", "p-m5", statefulTopology("foo")))
	if codes := statusCodes(r); len(codes) != 1 || codes[0] != streams.StatusMissingClientTags {
		t.Fatalf("m5 statuses %v", codes)
	}
}

// Classic members in a migrating group: a classic member reports offsets
// only when it joins, so it gets a moved active at once; a streams member
// taking a task from a classic owner warms it up while the classic member
// keeps running it.
func TestWarmupClassicMembers(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	h.md.SetTopic("app-store-changelog", 6)
	w := newWorld(t, h, "g")
	w.streamsJoin("s1", "ps1", statefulTopology("foo"))
	g := h.group("g")
	c1 := w.newClassic("c1", "pc1")
	if j := c1.join(); j.Err != nil {
		t.Fatal(j.Err)
	}
	if tg := g.Target["c1"]; streams.TasksCount(tg.Active) != 3 || len(tg.Warmup) != 0 {
		t.Fatalf("classic c1 target %+v", tg)
	}
	c1.sync()
	w.settleStreams("s1")
	c1.rebalance()
	if len(c1.active) != 3 || g.State() != streams.GroupStable {
		t.Fatalf("c1 active %v, state %v", c1.active, g.State())
	}
	w.streamsJoin("s2", "ps2", statefulTopology("foo"))
	warm := g.Target["s2"].Warmup
	if streams.TasksCount(warm) == 0 || len(g.Target["s2"].Active) != 0 {
		t.Fatalf("s2 target %+v", g.Target["s2"])
	}
	// The owners keep running what s2 warms up: the classic owner moves to
	// the new epoch (a rejoin) without giving up a task.
	streams.ForEachTask(warm, func(task streams.TaskID) {
		if p := g.ActiveOwners[task]; p == "" {
			t.Fatalf("warm-up task %v has no active owner", task)
		}
	})
	c1.mustRejoin()
	c1.rebalance()
	w.settleStreams("s1")
	if len(c1.active) != 3 || c1.generation != g.GroupEpoch {
		t.Fatalf("c1 active %v at generation %d (group epoch %d)", c1.active, c1.generation, g.GroupEpoch)
	}
}

// Sticky placement at startup (Kafka 4.4, KAFKA-20719): members restarting
// together report the offsets of the state they have on disk on join, and
// the first assignment gives each its own tasks back; nobody runs a task
// yet, so no warm-up is needed.
func TestStickyStartupFromJoinOffsets(t *testing.T) {
	h := newStickyHarness(t, func(c *streams.Config) { c.Defaults.InitialRebalanceDelay = 3 * time.Second })
	h.md.SetTopic("foo", 4)
	h.md.SetTopic("app-store-changelog", 4)
	onDisk := map[string][]int32{"m1": {2, 3}, "m2": {0, 1}}
	for _, id := range []string{"m1", "m2"} {
		req := joinReq("g", id, "p-"+id, statefulTopology("foo"))
		for _, p := range onDisk[id] {
			req.TaskOffsets = append(req.TaskOffsets, kmsg.TaskOffset{SubtopologyID: "0", Partition: p, Offset: 500})
		}
		h.ok(req)
	}
	h.advance(3 * time.Second)
	g := h.group("g")
	for id, ps := range onDisk {
		if tg := g.Target[id]; !streams.TasksEqual(tg.Active, tasks("0", ps...)) || len(tg.Warmup) != 0 {
			t.Fatalf("%s target %+v, want its on-disk tasks %v", id, tg, ps)
		}
	}
}

// The processId rule (KIP-1071): a warm-up moving between two members of
// one process waits until the other member has revoked it.
func TestWarmupProcessIDRule(t *testing.T) {
	h := statefulOneMember(t, nil)
	g := h.group("g")
	h.ok(joinReq("g", "m2", "p2", statefulTopology("foo")))
	h.settle("m2")
	if c := g.Members["m2"].CurrentAssignment(); !streams.TasksEqual(c.Assigned.Warmup, tasks("0", 2, 3)) {
		t.Fatalf("m2 current %+v", c)
	}
	r3 := h.ok(joinReq("g", "m3", "p2", statefulTopology("foo")))
	if tg := g.Target["m3"]; !streams.TasksEqual(tg.Warmup, tasks("0", 3)) {
		t.Fatalf("m3 target %+v", tg)
	}
	if got, _ := assigned(r3); streams.TasksContains(got.Warmup, "0", 3) || g.Members["m3"].CurrentAssignment().State != streams.MemberUnreleasedTasks {
		t.Fatalf("m3 got warm-up 3 while m2 of its process holds it: %+v", got)
	}
	// m2 is told to give up warm-up 3 and confirms it.
	r2 := h.ok(hbReq("g", "m2", g.Members["m2"].MemberEpoch(), nil))
	got, _ := assigned(r2)
	if streams.TasksContains(got.Warmup, "0", 3) {
		t.Fatalf("m2 keeps warm-up 3: %+v", got)
	}
	h.ok(hbReq("g", "m2", r2.MemberEpoch, &got))
	r3 = h.ok(hbReq("g", "m3", g.Members["m3"].MemberEpoch(), &streams.TaskSets{}))
	if got, _ := assigned(r3); !streams.TasksEqual(got.Warmup, tasks("0", 3)) {
		t.Fatalf("m3 after the release: %+v", got)
	}
}
