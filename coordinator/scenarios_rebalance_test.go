package coordinator

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// twoMemberGroup: m1 (p1) holds 0-2 and m2 (p2) holds 3-5 of "foo", both
// stable at epoch 3.
func twoMemberGroup(t *testing.T, mut func(*streams.Config)) *harness {
	h := newHarness(t, mut)
	h.md.SetTopic("foo", 6)
	h.ok(joinReq("g", "m1", "p1", sourceTopology("foo")))
	r2 := h.ok(joinReq("g", "m2", "p2", sourceTopology("foo")))
	if r2.MemberEpoch != 3 {
		t.Fatalf("m2 epoch %d", r2.MemberEpoch)
	}
	// m1 gives up 3-5, then m2 gets them.
	r1 := h.ok(hbReq("g", "m1", 2, nil))
	got, _ := assigned(r1)
	r1 = h.ok(hbReq("g", "m1", r1.MemberEpoch, &got))
	r2 = h.ok(hbReq("g", "m2", 3, &streams.TaskSets{}))
	g := h.group("g")
	if g.State() != streams.GroupStable || r1.MemberEpoch != 3 || r2.MemberEpoch != 3 {
		t.Fatalf("setup: state %v epochs %d %d", g.State(), r1.MemberEpoch, r2.MemberEpoch)
	}
	if !streams.TasksEqual(g.Members["m1"].CurrentAssignment().Assigned.Active, tasks("0", 0, 1, 2)) || !streams.TasksEqual(g.Members["m2"].CurrentAssignment().Assigned.Active, tasks("0", 3, 4, 5)) {
		t.Fatalf("setup: %+v", snapshot(g).Members)
	}
	return h
}

// §11.16: revoke before assign.
func TestScenario16ThirdMemberJoins(t *testing.T) {
	h := twoMemberGroup(t, nil)
	g := h.group("g")
	r3 := h.ok(joinReq("g", "m3", "p3", sourceTopology("foo")))
	if g.GroupEpoch != 4 || g.AssignmentEpoch != 4 {
		t.Fatalf("epochs %d %d", g.GroupEpoch, g.AssignmentEpoch)
	}
	if got, _ := assigned(r3); !got.IsEmpty() || r3.MemberEpoch != 4 || g.Members["m3"].CurrentAssignment().State != streams.MemberUnreleasedTasks {
		t.Fatalf("m3: epoch %d tasks %+v state %v", r3.MemberEpoch, got, g.Members["m3"].CurrentAssignment().State)
	}
	// m1 is asked to revoke task 2 and stays at epoch 3.
	r1 := h.ok(hbReq("g", "m1", 3, nil))
	got, ok := assigned(r1)
	if !ok || !streams.TasksEqual(got.Active, tasks("0", 0, 1)) || r1.MemberEpoch != 3 {
		t.Fatalf("m1: epoch %d tasks %+v", r1.MemberEpoch, got)
	}
	if c := g.Members["m1"].CurrentAssignment(); c.State != streams.MemberUnrevokedTasks || !streams.TasksEqual(c.PendingRevocation.Active, tasks("0", 2)) {
		t.Fatalf("m1 current %+v", c)
	}
	if !h.c.inline || h.queue("g").timers[streams.RebalanceTimerKey("m1")] == nil {
		t.Fatal("no rebalance timer while revoking")
	}
	// Still owning task 2: nothing moves.
	r1 = h.ok(hbReq("g", "m1", 3, &streams.TaskSets{Active: tasks("0", 0, 1, 2)}))
	if r1.MemberEpoch != 3 {
		t.Fatalf("m1 moved on before revoking: %d", r1.MemberEpoch)
	}
	r3 = h.ok(hbReq("g", "m3", 4, &streams.TaskSets{}))
	if _, ok := assigned(r3); ok {
		t.Fatal("m3 got tasks still owned by m1")
	}
	// m1 revokes: it moves to epoch 4 and task 2 becomes free.
	r1 = h.ok(hbReq("g", "m1", 3, &streams.TaskSets{Active: tasks("0", 0, 1)}))
	if r1.MemberEpoch != 4 || h.queue("g").timers[streams.RebalanceTimerKey("m1")] != nil {
		t.Fatalf("m1 after revoking: epoch %d", r1.MemberEpoch)
	}
	r3 = h.ok(hbReq("g", "m3", 4, &streams.TaskSets{}))
	got, _ = assigned(r3)
	if !streams.TasksEqual(got.Active, tasks("0", 2)) || g.Members["m3"].CurrentAssignment().State != streams.MemberUnreleasedTasks {
		t.Fatalf("m3: %+v", got)
	}
	if e := g.Members["m3"].CurrentAssignment().ActiveEpochs[streams.TaskID{Subtopology: "0", Partition: 2}]; e != 4 {
		t.Fatalf("task epoch %d, want 4", e)
	}
	r2 := h.ok(hbReq("g", "m2", 3, nil))
	got, _ = assigned(r2)
	h.ok(hbReq("g", "m2", r2.MemberEpoch, &got))
	r3 = h.ok(hbReq("g", "m3", 4, &streams.TaskSets{Active: tasks("0", 2)}))
	got, _ = assigned(r3)
	if !streams.TasksEqual(got.Active, tasks("0", 2, 5)) || g.State() != streams.GroupStable {
		t.Fatalf("m3 final %+v state %v", got, g.State())
	}
}

// §11.17: a member that does not revoke within its rebalance timeout is
// fenced; a timer cancelled by a revocation in time does nothing.
func TestScenario17RebalanceTimeout(t *testing.T) {
	h := twoMemberGroup(t, nil)
	g := h.group("g")
	h.ok(joinReq("g", "m3", "p3", sourceTopology("foo")))
	h.ok(hbReq("g", "m1", 3, nil)) // m1 revoking, timer 300s
	r2 := h.ok(hbReq("g", "m2", 3, nil))
	got, _ := assigned(r2)
	h.ok(hbReq("g", "m2", 3, &got)) // m2 revoked in time
	epoch := g.GroupEpoch
	// Keep the sessions alive while the rebalance timeout runs out.
	for i := 0; i < 10; i++ {
		h.advance(30 * time.Second)
		h.ok(hbReq("g", "m2", g.Members["m2"].MemberEpoch(), nil))
		h.ok(hbReq("g", "m3", g.Members["m3"].MemberEpoch(), nil))
		if g.Members["m1"] == nil {
			break
		}
		h.ok(hbReq("g", "m1", 3, nil))
	}
	if g.Members["m1"] != nil || g.GroupEpoch != epoch+1 {
		t.Fatalf("m1 not fenced: epoch %d", g.GroupEpoch)
	}
	if g.Members["m2"] == nil {
		t.Fatal("m2 fenced although it revoked in time")
	}
	wantError(t, h.hb(hbReq("g", "m1", 3, nil)), kerr.UnknownMemberID)
}

// §11.18: a session timeout fences; when the last member goes the group is
// Empty with its assignment epoch at the group epoch.
func TestScenario18SessionTimeout(t *testing.T) {
	h := twoMemberGroup(t, nil)
	g := h.group("g")
	h.advance(30 * time.Second)
	h.ok(hbReq("g", "m2", 3, nil))
	h.advance(20 * time.Second) // m1's 45 s are over, m2's are not
	if g.Members["m1"] != nil || g.Members["m2"] == nil || g.GroupEpoch != 4 {
		t.Fatalf("after m1's session: members %d epoch %d", len(g.Members), g.GroupEpoch)
	}
	h.advance(30 * time.Second)
	if len(g.Members) != 0 || g.State() != streams.GroupEmpty || g.AssignmentEpoch != g.GroupEpoch || g.GroupEpoch != 5 {
		t.Fatalf("empty: state %v epochs %d %d", g.State(), g.GroupEpoch, g.AssignmentEpoch)
	}
	if h.clock.Pending() != 0 {
		t.Fatalf("%d timers left for an empty group", h.clock.Pending())
	}
}

// §11.19: leaving writes three tombstones and a bump; the next heartbeat
// computes the target.
func TestScenario19Leave(t *testing.T) {
	h := twoMemberGroup(t, nil)
	g := h.group("g")
	resp := h.ok(hbReq("g", "m1", -1, nil))
	if resp.MemberEpoch != -1 || resp.MemberID != "m1" || resp.Status == nil {
		t.Fatalf("leave response %+v", resp)
	}
	if got, want := recordTypes(h.log.last()), []string{"-22:m1", "-21:m1", "-19:m1", "17:"}; !slices.Equal(got, want) {
		t.Fatalf("records %v, want %v", got, want)
	}
	if g.GroupEpoch != 4 || g.AssignmentEpoch != 3 || g.State() != streams.GroupAssigning {
		t.Fatalf("epochs %d %d state %v", g.GroupEpoch, g.AssignmentEpoch, g.State())
	}
	r2 := h.ok(hbReq("g", "m2", 3, nil))
	got, _ := assigned(r2)
	if r2.MemberEpoch != 4 || !streams.TasksEqual(got.Active, tasks("0", 0, 1, 2, 3, 4, 5)) {
		t.Fatalf("m2 epoch %d tasks %+v", r2.MemberEpoch, got)
	}
	resp = h.ok(hbReq("g", "m2", -1, nil))
	if got, want := recordTypes(h.log.last()), []string{"-22:m2", "-21:m2", "-19:m2", "17:", "20:"}; !slices.Equal(got, want) {
		t.Fatalf("last leave records %v, want %v", got, want)
	}
}

// §11.20: an idle heartbeat changes nothing and sends no lists.
func TestScenario20IdleHeartbeat(t *testing.T) {
	h := twoMemberGroup(t, nil)
	n := len(h.log.batches)
	req := hbReq("g", "m1", 3, nil)
	req.EndpointInformationEpoch = h.group("g").Mem.EndpointEpoch
	resp := h.ok(req)
	if _, ok := assigned(resp); ok || resp.PartitionsByUserEndpoint != nil || resp.MemberEpoch != 3 {
		t.Fatalf("idle response %+v", resp)
	}
	if len(h.log.batches) != n {
		t.Fatal("idle heartbeat wrote records")
	}
}

// §11.21: endpoint information follows assignment changes of members with
// an endpoint.
func TestScenario21EndpointInformation(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 2)
	j1 := joinReq("g", "m1", "p1", sourceTopology("foo"))
	j1.UserEndpoint = &kmsg.StreamsGroupHeartbeatRequestUserEndpoint{Host: "h1", Port: 1}
	r1 := h.ok(j1)
	if r1.EndpointInformationEpoch != 0 || len(r1.PartitionsByUserEndpoint) != 1 {
		t.Fatalf("creating heartbeat: epoch %d endpoints %+v", r1.EndpointInformationEpoch, r1.PartitionsByUserEndpoint)
	}
	req := hbReq("g", "m1", r1.MemberEpoch, nil)
	req.EndpointInformationEpoch = 0
	if r := h.ok(req); r.PartitionsByUserEndpoint != nil {
		t.Fatal("endpoints sent to an up-to-date member")
	}
	j2 := joinReq("g", "m2", "p2", sourceTopology("foo"))
	j2.UserEndpoint = &kmsg.StreamsGroupHeartbeatRequestUserEndpoint{Host: "h2", Port: 2}
	r2 := h.ok(j2)
	if r2.EndpointInformationEpoch != 1 || len(r2.PartitionsByUserEndpoint) != 2 {
		t.Fatalf("m2 join: epoch %d endpoints %+v", r2.EndpointInformationEpoch, r2.PartitionsByUserEndpoint)
	}
	// m1 loses task 1: its assignment changes, the epoch moves.
	req = hbReq("g", "m1", r1.MemberEpoch, nil)
	req.EndpointInformationEpoch = 1
	r1 = h.ok(req)
	if r1.EndpointInformationEpoch != 2 || len(r1.PartitionsByUserEndpoint) != 2 {
		t.Fatalf("m1: epoch %d endpoints %+v", r1.EndpointInformationEpoch, r1.PartitionsByUserEndpoint)
	}
}

// §11.22: a shutdown request reaches every member until the group is empty.
func TestScenario22ShutdownApplication(t *testing.T) {
	h := twoMemberGroup(t, nil)
	req := hbReq("g", "m1", 3, nil)
	req.ShutdownApplication = true
	if r := h.ok(req); !slices.Contains(statusCodes(r), streams.StatusShutdownApplication) {
		t.Fatalf("requester: %v", statusCodes(r))
	}
	if r := h.ok(hbReq("g", "m2", 3, nil)); !slices.Contains(statusCodes(r), streams.StatusShutdownApplication) {
		t.Fatalf("peer: %v", statusCodes(r))
	}
	h.ok(hbReq("g", "m1", -1, nil))
	h.ok(hbReq("g", "m2", -1, nil))
	r := h.ok(joinReq("g", "m3", "p3", sourceTopology("foo")))
	if slices.Contains(statusCodes(r), streams.StatusShutdownApplication) {
		t.Fatal("shutdown outlived the group's members")
	}
}

// §11.23: changing the standby replicas bumps the epoch and places standbys
// off the active's process; the recovery lag does not bump.
func TestScenario23StandbyConfig(t *testing.T) {
	// Kafka 4.4's behaviour: no warm-ups (scenarios_warmup_test.go has them).
	h := newHarness(t, func(c *streams.Config) { c.Defaults.NumWarmupReplicas = 0 })
	h.md.SetTopic("foo", 2)
	h.md.SetTopic("app-store-changelog", 2)
	h.ok(joinReq("g", "m1", "p1", statefulTopology("foo")))
	h.ok(joinReq("g", "m2", "p2", statefulTopology("foo")))
	g := h.group("g")
	epoch := g.GroupEpoch
	lag := int64(5)
	if err := h.c.SetGroupConfig("g", &streams.GroupConfigOverride{AcceptableRecoveryLag: &lag}); err != nil {
		t.Fatal(err)
	}
	r := h.ok(hbReq("g", "m1", g.Members["m1"].MemberEpoch(), nil))
	if g.GroupEpoch != epoch || r.AcceptableRecoveryLag != 5 {
		t.Fatalf("recovery lag bumped: %d, lag %d", g.GroupEpoch, r.AcceptableRecoveryLag)
	}
	one := 1
	if err := h.c.SetGroupConfig("g", &streams.GroupConfigOverride{NumStandbyReplicas: &one}); err != nil {
		t.Fatal(err)
	}
	h.ok(hbReq("g", "m1", g.Members["m1"].MemberEpoch(), nil))
	if g.GroupEpoch != epoch+1 {
		t.Fatalf("standby change did not bump: %d", g.GroupEpoch)
	}
	for id, tg := range g.Target {
		if streams.TasksCount(tg.Standby) != 1 || streams.TasksContainsAny(tg.Standby, tg.Active) {
			t.Fatalf("%s target %+v", id, tg)
		}
	}
	if err := h.c.SetGroupConfig("g", &streams.GroupConfigOverride{NumStandbyReplicas: new(int)}); err != nil {
		t.Fatal(err)
	}
	three := 3
	if err := h.c.SetGroupConfig("g", &streams.GroupConfigOverride{NumStandbyReplicas: &three}); err == nil {
		t.Fatal("3 standby replicas accepted")
	}
}

// §11.24: a source topic gaining partitions bumps the epoch and adds tasks;
// a stateful subtopology then finds its changelog too small.
func TestScenario24SourceTopicGrows(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 2)
	r := h.ok(joinReq("g", "m1", "p1", sourceTopology("foo")))
	g := h.group("g")
	epoch := g.GroupEpoch
	h.md.SetTopic("foo", 3)
	r = h.ok(hbReq("g", "m1", r.MemberEpoch, nil))
	got, _ := assigned(r)
	if g.GroupEpoch != epoch+1 || !streams.TasksEqual(got.Active, tasks("0", 0, 1, 2)) {
		t.Fatalf("epoch %d tasks %+v", g.GroupEpoch, got)
	}

	h2 := newHarness(t, nil)
	h2.md.SetTopic("foo", 2)
	h2.md.SetTopic("app-store-changelog", 2)
	r = h2.ok(joinReq("g", "m1", "p1", statefulTopology("foo")))
	h2.md.SetTopic("foo", 3)
	r = h2.ok(hbReq("g", "m1", r.MemberEpoch, nil))
	if !slices.Equal(statusCodes(r), []int8{streams.StatusIncorrectlyPartitionedTopics}) {
		t.Fatalf("status %+v", r.Status)
	}
	if got, _ := assigned(r); !got.IsEmpty() {
		t.Fatalf("tasks while not ready %+v", got)
	}
}

// MISSING_CLIENT_TAGS (status 6) is sent to v1 members lacking a configured
// rack-aware assignment tag, never at v0; the tags are assignment configs.
func TestMissingClientTags(t *testing.T) {
	h := newHarness(t, func(c *streams.Config) { c.Defaults.RackAwareAssignmentTags = []string{"zone"} })
	h.md.SetTopic("foo", 2)
	r := h.ok(joinReq("g", "m1", "p1", sourceTopology("foo")))
	if !slices.Equal(statusCodes(r), []int8{streams.StatusMissingClientTags}) {
		t.Fatalf("v1 without tag: %v", statusCodes(r))
	}
	v0 := joinReq("g", "m2", "p2", sourceTopology("foo"))
	v0.Version = 0
	if r := h.ok(v0); len(r.Status) != 0 {
		t.Fatalf("v0: %v", statusCodes(r))
	}
	tagged := joinReq("g", "m3", "p3", sourceTopology("foo"))
	tagged.ClientTags = []kmsg.StreamsGroupHeartbeatRequestClientTag{{Key: "zone", Value: "a"}}
	if r := h.ok(tagged); len(r.Status) != 0 {
		t.Fatalf("tagged: %v", statusCodes(r))
	}
	g := h.group("g")
	if len(g.LastAssignmentConfigs) != 2 || g.LastAssignmentConfigs[1].Value != "zone" {
		t.Fatalf("assignment configs %+v", g.LastAssignmentConfigs)
	}
	epoch := g.GroupEpoch
	if err := h.c.SetGroupConfig("g", &streams.GroupConfigOverride{RackAwareAssignmentTags: []string{"zone", "rack"}}); err != nil {
		t.Fatal(err)
	}
	h.ok(hbReq("g", "m3", g.Members["m3"].MemberEpoch(), nil))
	if g.GroupEpoch != epoch+1 {
		t.Fatalf("tag change did not bump: %d", g.GroupEpoch)
	}
}
