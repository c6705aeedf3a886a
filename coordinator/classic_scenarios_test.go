package coordinator

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// mixedGroup: streams member s1 (process ps) and classic member c1 (process
// pc) share the 6 tasks of "foo", all stable: s1 holds 0-2, c1 3-5.
func mixedGroup(t *testing.T) (*world, *classicClient) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	return mixedGroupOf(t, h)
}

// mixedGroupOf builds mixedGroup's group on h (topic foo of 6 partitions).
func mixedGroupOf(t *testing.T, h *harness) (*world, *classicClient) {
	w := newWorld(t, h, "g")
	w.streamsJoin("s1", "ps", sourceTopology("foo"))
	if got := streams.TasksCount(w.streams["s1"].owned.Active); got != 6 {
		t.Fatalf("s1 holds %d tasks", got)
	}
	c1 := w.newClassic("c1", "pc")
	c1.endpoint = "c1host:8080"

	// c1 joins fresh: the group epoch moves, c1 waits for tasks s1 holds.
	j := c1.join()
	g := h.group("g")
	if j.Err != nil || j.Generation != g.GroupEpoch || g.Members["c1"].CurrentAssignment().State != streams.MemberUnreleasedTasks {
		t.Fatalf("c1 join: %+v group epoch %d state %v", j, g.GroupEpoch, g.Members["c1"].CurrentAssignment().State)
	}
	if s, _ := c1.sync(); s.Err != nil || len(c1.owned) != 0 {
		t.Fatalf("c1 first sync: %v owned %v", s.Err, c1.owned)
	}
	if c1.mustRejoin() {
		t.Fatal("c1 told to rejoin while its tasks are still held by s1")
	}
	// s1 revokes 3-5, then c1 is pulled in to get them.
	w.settleStreams("s1")
	if !c1.mustRejoin() {
		t.Fatal("c1 not told to rejoin once its tasks were released")
	}
	c1.rebalance()
	if !slices.Equal(c1.owned, fooPartitions(3, 4, 5)) || !slices.Equal(c1.active, cTasks(3, 4, 5)) {
		t.Fatalf("c1 owns %v tasks %v", c1.owned, c1.active)
	}
	if c1.mustRejoin() || g.State() != streams.GroupStable {
		t.Fatalf("group not stable: %v", g.State())
	}
	return w, c1
}

func TestClassicMemberJoinsStreamsGroup(t *testing.T) {
	w, c1 := mixedGroup(t)
	g := w.h.group("g")
	if c1.generation != g.Members["c1"].MemberEpoch() {
		t.Fatalf("generation %d, member epoch %d", c1.generation, g.Members["c1"].MemberEpoch())
	}
	m := g.Members["c1"].Meta
	if m.Classic == nil || m.Classic.SessionTimeoutMs != 10000 || m.RebalanceTimeoutMs != 60000 || m.Classic.SubscriptionVersion != 11 || m.ProcessID != c1.process.String() {
		t.Fatalf("classic metadata %+v %+v", m, m.Classic)
	}
	// The IQ map lists every active partition of the group by endpoint;
	// only c1 has one.
	info := c1.lastInfo
	if len(info.PartitionsByHost) != 1 || info.PartitionsByHost[0].Host != "c1host" || info.PartitionsByHost[0].Port != 8080 ||
		!slices.Equal(info.PartitionsByHost[0].Partitions, fooPartitions(3, 4, 5)) {
		t.Fatalf("host map %+v", info.PartitionsByHost)
	}
}

// A classic member that must give tasks up: a revoke round (JoinGroup keeps
// its generation, SyncGroup withholds the tasks, it revokes and rejoins with
// fewer owned partitions), then an assign round for the newcomer.
func TestClassicMemberRevokesCooperatively(t *testing.T) {
	w, c1 := mixedGroup(t)
	g := w.h.group("g")
	before := c1.generation
	w.streamsJoin("s2", "ps2", sourceTopology("foo"))
	if !c1.mustRejoin() {
		t.Fatal("c1 not told to rejoin after the group epoch moved")
	}
	j := c1.join()
	if j.Err != nil || j.Generation != before || g.Members["c1"].CurrentAssignment().State != streams.MemberUnrevokedTasks {
		t.Fatalf("revoke round join: %+v state %v", j, g.Members["c1"].CurrentAssignment().State)
	}
	pending := g.Members["c1"].CurrentAssignment().PendingRevocation.Active
	if streams.TasksCount(pending) == 0 {
		t.Fatal("nothing to revoke")
	}
	// s2 gets nothing c1 still owns.
	w.settleStreams("s2")
	s, revoked := c1.sync()
	if s.Err != nil || !revoked {
		t.Fatalf("revoke round sync: %v revoked %v", s.Err, revoked)
	}
	// Commits at the old generation are accepted during the round.
	if r := streams.ValidateClassicOffsetCommit(g, streams.OffsetCommitRequest{GroupID: "g", MemberID: "c1", MemberEpoch: c1.generation, Partitions: []streams.CommitPartition{{Topic: "foo", Partition: 3}}}); r.Err != nil {
		t.Fatalf("commit during revocation: %v", r.Err)
	}
	if !c1.mustRejoin() {
		t.Fatal("c1 revoking but not told to rejoin")
	}
	c1.rebalance()
	if c1.generation != g.AssignmentEpoch || g.Members["c1"].CurrentAssignment().State == streams.MemberUnrevokedTasks {
		t.Fatalf("c1 generation %d assignment epoch %d state %v", c1.generation, g.AssignmentEpoch, g.Members["c1"].CurrentAssignment().State)
	}
	w.settleStreams("s1")
	w.settleStreams("s2")
	for c1.mustRejoin() {
		c1.rebalance()
	}
	total := len(c1.active) + streams.TasksCount(w.streams["s1"].owned.Active) + streams.TasksCount(w.streams["s2"].owned.Active)
	if total != 6 || g.State() != streams.GroupStable {
		t.Fatalf("after the rounds: %d tasks held, state %v", total, g.State())
	}
}

// A classic member that stops: fenced after its own session timeout (10 s,
// not the group's 45 s); its tasks go to s1.
func TestClassicMemberSessionTimeout(t *testing.T) {
	w, c1 := mixedGroup(t)
	g := w.h.group("g")
	w.h.advance(9 * time.Second)
	w.streamsHeartbeat("s1")
	if g.Members["c1"] == nil {
		t.Fatal("fenced before its session timeout")
	}
	c1.gone = true
	w.h.advance(2 * time.Second)
	if g.Members["c1"] != nil {
		t.Fatal("not fenced after its session timeout")
	}
	// Back from a long pause, the fenced member is told it is unknown and
	// must give up its tasks: real fencing, not the migration.
	if j := c1.join(); !errors.Is(j.Err, kerr.UnknownMemberID) {
		t.Fatalf("fenced member rejoins: %v", j.Err)
	}
	w.settleStreams("s1")
	if streams.TasksCount(w.streams["s1"].owned.Active) != 6 {
		t.Fatalf("s1 holds %v", w.streams["s1"].owned.Active)
	}
}

// A classic member told to rejoin that never does is fenced after its
// rebalance timeout, even while it keeps heartbeating.
func TestClassicMemberNeverRejoins(t *testing.T) {
	w, c1 := mixedGroup(t)
	logs := captureLogs(w.h)
	g := w.h.group("g")
	w.streamsJoin("s2", "ps2", sourceTopology("foo"))
	for range 7 {
		if !c1.mustRejoin() {
			t.Fatal("not told to rejoin")
		}
		w.streamsHeartbeat("s1")
		w.streamsHeartbeat("s2")
		w.h.advance(8 * time.Second)
	}
	if g.Members["c1"] == nil {
		t.Fatal("fenced before its rebalance timeout")
	}
	// One more heartbeat, so that its session outlasts the rebalance
	// timeout and the join timeout alone fences it.
	c1.mustRejoin()
	w.h.advance(8 * time.Second)
	if g.Members["c1"] != nil {
		t.Fatal("a member that never rejoins is kept past its rebalance timeout")
	}
	wantFields(t, logs.want(t, "info", "[GroupId g] Member c1 fenced from the group because "+streams.ClassicJoinTimeoutReason+"."), map[string]string{"member": "c1"})
	c1.gone = true
	w.settleStreams("s1")
	w.settleStreams("s2")
	w.settleStreams("s1")
}

// Genuinely bad requests get the classic coordinator's errors.
func TestClassicBadRequests(t *testing.T) {
	w, c1 := mixedGroup(t)
	g := w.h.group("g")
	gen := c1.generation
	for _, tc := range []struct {
		name string
		err  error
		want *kerr.Error
	}{
		{"stale generation heartbeat", heartbeatAs(w, "c1", "", gen-1), kerr.IllegalGeneration},
		{"unknown member heartbeat", heartbeatAs(w, "nobody", "", gen), kerr.UnknownMemberID},
		{"streams member heartbeat", heartbeatAs(w, "s1", "", gen), kerr.InconsistentGroupProtocol},
		{"stale generation commit", streams.ValidateClassicOffsetCommit(g, streams.OffsetCommitRequest{GroupID: "g", MemberID: "c1", MemberEpoch: gen + 1}).Err, kerr.IllegalGeneration},
		{"unknown member commit", streams.ValidateClassicOffsetCommit(g, streams.OffsetCommitRequest{GroupID: "g", MemberID: "x", MemberEpoch: gen}).Err, kerr.UnknownMemberID},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	bad := "range"
	var res streams.ClassicSyncResult
	w.h.c.ClassicSyncGroup(streams.ClassicSyncRequest{GroupID: "g", MemberID: "c1", Generation: gen, ProtocolName: &bad}, func(r streams.ClassicSyncResult) { res = r })
	if !errors.Is(res.Err, kerr.InconsistentGroupProtocol) {
		t.Errorf("sync with protocol range: %v", res.Err)
	}
	w.h.c.ClassicSyncGroup(streams.ClassicSyncRequest{GroupID: "g", MemberID: "c1", Generation: gen - 1}, func(r streams.ClassicSyncResult) { res = r })
	if !errors.Is(res.Err, kerr.IllegalGeneration) {
		t.Errorf("sync with a stale generation: %v", res.Err)
	}
	// A group not served here is the caller's to forward.
	var j streams.ClassicJoinResult
	sub, info := c1.subscription()
	w.h.c.ClassicJoinGroup(streams.ClassicJoinRequest{GroupID: "other", MemberID: "x", Subscription: sub, Info: info}, func(r streams.ClassicJoinResult) { j = r })
	if !errors.Is(j.Err, streams.ErrClassicNotServed) {
		t.Errorf("join of an unknown group: %v", j.Err)
	}
	// The good member was never disturbed.
	if c1.mustRejoin() {
		t.Error("c1 told to rejoin by others' bad requests")
	}
}

func heartbeatAs(w *world, member, instance string, gen int32) error {
	var err error
	w.h.c.ClassicHeartbeat(streams.ClassicHeartbeatRequest{GroupID: w.group, MemberID: member, InstanceID: instance, Generation: gen}, func(e error) { err = e })
	return err
}

// Static classic members: a restart with a new member id and the same
// instance takes over the tasks; the old member id is fenced.
func TestClassicStaticMemberReplaced(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	w := newWorld(t, h, "g")
	w.streamsJoin("s1", "ps", sourceTopology("foo"))
	c1 := w.newClassic("c1", "pc")
	c1.instance = "inst-1"
	c1.rebalance()
	w.settleStreams("s1")
	for c1.mustRejoin() {
		c1.rebalance()
	}
	held := slices.Clone(c1.active)
	if len(held) == 0 {
		t.Fatal("c1 holds nothing")
	}
	g := h.group("g")
	epoch := g.GroupEpoch
	// The restarted instance comes back under a new member id, owning
	// nothing (it lost its partitions on restart).
	c1.gone = true
	logs := captureLogs(h)
	c2 := w.newClassic("c2", "pc")
	c2.instance = "inst-1"
	j := c2.join()
	if j.Err != nil || g.Members["c1"] != nil || g.GroupEpoch != epoch {
		t.Fatalf("replacement: %v, old member kept %v, epoch %d→%d", j.Err, g.Members["c1"] != nil, epoch, g.GroupEpoch)
	}
	if s, _ := c2.sync(); s.Err != nil || !slices.Equal(c2.active, held) {
		t.Fatalf("c2 got %v, c1 held %v (%v)", c2.active, held, s.Err)
	}
	if err := heartbeatAs(w, "c1", "inst-1", c1.generation); !errors.Is(err, kerr.FencedInstanceID) {
		t.Fatalf("old member: %v", err)
	}
	line := logs.want(t, "info", "[GroupId g][MemberId c2] Static member with instance id inst-1 re-joins the streams group using the classic protocol. Created a new member c2 to replace the existing member c1.")
	wantFields(t, line, map[string]string{"member": "c2", "replaced_member": "c1", "instance": "inst-1"})
}

// A member from the future (SubscriptionInfo above 11) gets a version-11
// assignment with nothing in it, re-subscribes at 11 and then gets tasks.
func TestClassicMemberFromTheFuture(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	w := newWorld(t, h, "g")
	w.streamsJoin("s1", "ps", sourceTopology("foo"))
	c1 := w.newClassic("c1", "pc")
	c1.version, c1.latest = 13, 13
	if j := c1.join(); j.Err != nil {
		t.Fatal(j.Err)
	}
	s, _ := c1.sync()
	if s.Err != nil || s.Info.Version != 11 || s.Info.CommonlySupportedVersion != 11 || len(c1.owned) != 0 {
		t.Fatalf("future member: %v info %+v owned %v", s.Err, s.Info, c1.owned)
	}
	if c1.version != 11 {
		t.Fatalf("client did not move to v11: %d", c1.version)
	}
	w.settleStreams("s1")
	c1.rebalance()
	for c1.mustRejoin() {
		c1.rebalance()
	}
	if len(c1.active) != 3 || h.group("g").Members["c1"].Meta.Classic.SubscriptionVersion != 11 {
		t.Fatalf("after re-subscribing: %v", c1.active)
	}
}

// Version probing: each member is answered at its own used version, with a
// commonly supported version it supports; a member pinned low is moved up
// with one extra rebalance.
func TestClassicVersionProbing(t *testing.T) {
	for _, tc := range []struct {
		used, latest       int32
		wantV, wantCommon  int32
		wantUsedAfterwards int32
	}{
		{11, 11, 11, 11, 11},
		{9, 11, 9, 11, 11},
		{7, 7, 7, 7, 7},
		{4, 10, 4, 10, 10},
	} {
		h := newHarness(t, nil)
		h.md.SetTopic("foo", 6)
		w := newWorld(t, h, "g")
		w.streamsJoin("s1", "ps", sourceTopology("foo"))
		c1 := w.newClassic("c1", "pc")
		c1.version, c1.latest = tc.used, tc.latest
		if j := c1.join(); j.Err != nil {
			t.Fatal(j.Err)
		}
		s, _ := c1.sync()
		if s.Err != nil || s.Info.Version != tc.wantV || s.Info.CommonlySupportedVersion != tc.wantCommon {
			t.Fatalf("v%d/%d: got %v %+v", tc.used, tc.latest, s.Err, s.Info)
		}
		if c1.version != tc.wantUsedAfterwards {
			t.Fatalf("v%d/%d: client now at %d", tc.used, tc.latest, c1.version)
		}
		c1.rebalance()
		if got := h.group("g").Members["c1"].Meta.Classic.SubscriptionVersion; got != tc.wantUsedAfterwards {
			t.Fatalf("group keeps version %d", got)
		}
	}
}

// Shutdown both ways: a classic member's errorCode 4 reaches streams members
// as SHUTDOWN_APPLICATION, and a streams member's shutdown request reaches
// classic members as AssignmentInfo errCode 4 with nothing assigned.
func TestClassicShutdownBothWays(t *testing.T) {
	t.Run("classic to streams", func(t *testing.T) {
		w, c1 := mixedGroup(t)
		c1.shutdown = true
		if j := c1.join(); j.Err != nil {
			t.Fatal(j.Err)
		}
		r := w.streamsHeartbeat("s1")
		if !slices.Contains(statusCodes(r), streams.StatusShutdownApplication) {
			t.Fatalf("s1 statuses %v", statusCodes(r))
		}
		s, _ := c1.sync()
		if s.Err != nil || s.Info.ErrCode != classicstreams.AssignorErrorShutdownRequested {
			t.Fatalf("c1: %v %+v", s.Err, s.Info)
		}
	})
	t.Run("streams to classic", func(t *testing.T) {
		w, c1 := mixedGroup(t)
		req := hbReq("g", "s1", w.streams["s1"].epoch, &w.streams["s1"].owned)
		req.ShutdownApplication = true
		w.h.ok(req)
		c1.rebalance()
		if c1.lastInfo.ErrCode != classicstreams.AssignorErrorShutdownRequested || len(c1.active) != 0 {
			t.Fatalf("c1 info %+v", c1.lastInfo)
		}
	})
}

// A classic member leaving with LeaveGroup is fenced at once.
func TestClassicLeaveGroup(t *testing.T) {
	w, c1 := mixedGroup(t)
	logs := captureLogs(w.h)
	var errs []error
	var err error
	w.h.c.ClassicLeaveGroup("g", []streams.ClassicLeaveMember{{MemberID: "c1"}, {MemberID: "ghost"}}, func(e []error, all error) { errs, err = e, all })
	if err != nil || errs[0] != nil || !errors.Is(errs[1], kerr.UnknownMemberID) {
		t.Fatalf("leave: %v %v", err, errs)
	}
	c1.gone = true
	if w.h.group("g").Members["c1"] != nil {
		t.Fatal("c1 still a member")
	}
	logs.want(t, "info", "[GroupId g][MemberId c1] Member c1 has left group through explicit `LeaveGroup` request.")
	wantFields(t, logs.want(t, "info", "Bumped streams group epoch"), map[string]string{"member": "c1", "reason": streams.BumpMemberLeft})
	w.settleStreams("s1")
	if streams.TasksCount(w.streams["s1"].owned.Active) != 6 {
		t.Fatal("tasks not back with s1")
	}
}

// A member that joins and never syncs is fenced after its rebalance
// timeout, heartbeats or not (Kafka's sync timeout).
func TestClassicMemberNeverSyncs(t *testing.T) {
	w, c1 := mixedGroup(t)
	logs := captureLogs(w.h)
	g := w.h.group("g")
	w.streamsJoin("s2", "ps2", sourceTopology("foo"))
	if !c1.mustRejoin() {
		t.Fatal("not told to rejoin")
	}
	if j := c1.join(); j.Err != nil {
		t.Fatal(j.Err)
	}
	for range 7 {
		if err := c1.heartbeat(); err != nil && !errors.Is(err, kerr.RebalanceInProgress) {
			t.Fatalf("heartbeat while syncing: %v", err)
		}
		w.streamsHeartbeat("s1")
		w.streamsHeartbeat("s2")
		w.h.advance(8 * time.Second)
	}
	if g.Members["c1"] == nil {
		t.Fatal("fenced before its rebalance timeout")
	}
	// One more heartbeat, so that the sync timeout alone fences it.
	if err := c1.heartbeat(); err != nil && !errors.Is(err, kerr.RebalanceInProgress) {
		t.Fatalf("heartbeat while syncing: %v", err)
	}
	w.h.advance(8 * time.Second)
	if g.Members["c1"] != nil {
		t.Fatal("a member that never syncs is kept past its rebalance timeout")
	}
	// Its rebalance timer (it has a task to revoke) and its sync timer end
	// together; the first fences it.
	wantFields(t, logs.want(t, "info", "[GroupId g] Member c1 fenced from the group because"), map[string]string{"member": "c1"})
	c1.gone = true
}
