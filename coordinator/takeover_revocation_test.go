package coordinator

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// revokingState is classicState with c's assignment of generation gen
// narrowed to keep: the upstream leader takes c's other tasks away in this
// generation (to give them to another member in the next one, once c
// revoked them), while c, its SyncGroup answer not yet applied, still owns
// them. Its JoinGroup of gen (the subscription) lists what it owned.
func revokingState(gen int32, c *classicClient, keep []int32, others ...*classicClient) streams.ClassicGroupState {
	st := classicState(gen, append([]*classicClient{c}, others...)...)
	m := &st.Members[0]
	m.Assignment.AssignedPartitions = fooPartitions(keep...)
	m.AssignmentInfo.ActiveTasks = cTasks(keep...)
	return st
}

// A takeover while the upstream runs a cooperative rebalance (issue #28, the
// e2e's "task 1_2 active on c2 and c3 at the takeover"). At generation 7 the
// leader moves 0_3 from c1 to c2 in two steps, as Kafka Streams does under
// the cooperative protocol: generation 7 takes it from c1 and gives it to no
// one; generation 8, after c1 revoked it and rejoined, gives it to c2. The
// upstream group is Stable at 7 as soon as the leader's SyncGroup arrived,
// so DescribeGroups shows 0_3 in nobody's assignment while c1 still runs it
// (its SyncGroup answer not yet sent or applied). The takeover must carry
// 0_3 as c1's, pending revocation, until c1's next JoinGroup says it is
// gone; taken as free, it went to the streams member at once, and was active
// on two instances until c1 revoked it.
func TestTakeOverWhileClassicMemberRevokes(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	w := newWorld(t, h, "g")
	c1, c2 := w.newClassic("c1", "p1"), w.newClassic("c2", "p2")
	c1.owned, c1.active = fooPartitions(0, 1, 2, 3), cTasks(0, 1, 2, 3)
	c2.owned, c2.active = fooPartitions(4, 5), cTasks(4, 5)
	// w.check, run by every step, fails the test once 0_3 is active
	// anywhere else while c1 runs it.
	resp := w.takeOver(revokingState(7, c1, []int32{0, 1, 2}, c2), "s1", "ps")
	g := h.group("g")
	if resp.ErrorCode != 0 || g.Members["c1"].CurrentAssignment().State != streams.MemberUnrevokedTasks {
		t.Fatalf("takeover: %d, c1 %+v", resp.ErrorCode, g.Members["c1"].CurrentAssignment())
	}
	// c1's revocation commits 0_3 at generation 7 (under EOS, before it
	// rejoins): accepted.
	if r := streams.ValidateClassicOffsetCommit(g, streams.OffsetCommitRequest{GroupID: "g", MemberID: "c1", MemberEpoch: 7}); r.Err != nil {
		t.Fatalf("c1's revocation commit at generation 7: %v", r.Err)
	}
	// The others go on first: nobody gets 0_3 yet.
	for range 3 {
		w.streamsHeartbeat("s1")
		if c2.mustRejoin() {
			c2.rebalance()
		}
		h.advance(time.Second)
	}
	// c1's SyncGroup of generation 7 reaches the served group: it gets its
	// generation-7 assignment, revokes 0_3 and rejoins.
	if s, revoked := c1.sync(); s.Err != nil || !revoked || slices.Contains(c1.active, classicstreams.TaskID{Partition: 3}) {
		t.Fatalf("c1's SyncGroup of generation 7: %v, revoked %v, active %v", s.Err, revoked, c1.active)
	}
	c1.rebalance()
	for round := 0; round < 6; round++ {
		for _, c := range []*classicClient{c1, c2} {
			if c.mustRejoin() {
				c.rebalance()
			}
		}
		w.streamsHeartbeat("s1")
		h.advance(time.Second)
	}
	n1, n2, ns := len(c1.active), len(c2.active), streams.TasksCount(w.streams["s1"].owned.Active)
	if n1 != 2 || n2 != 2 || ns != 2 || g.State() != streams.GroupStable {
		t.Fatalf("after the takeover: c1 %d c2 %d s1 %d, state %v", n1, n2, ns, g.State())
	}
}

// A task one member is revoking that another member's assignment already
// holds cannot come from Kafka's cooperative leader: the takeover does not
// guess who runs it, it leaves the group upstream and the streams member
// retries.
func TestTakeOverRetriesWhenRevokedTaskIsAssigned(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	w := newWorld(t, h, "g")
	c1, c2 := w.newClassic("c1", "p1"), w.newClassic("c2", "p2")
	// c1's subscription still lists foo-3; the model's c1 runs 0_0-0_2.
	c1.owned, c1.active = fooPartitions(0, 1, 2, 3), cTasks(0, 1, 2)
	c2.owned, c2.active = fooPartitions(3, 4, 5), cTasks(3, 4, 5)
	resp := w.takeOver(revokingState(7, c1, []int32{0, 1, 2}, c2), "s1", "ps")
	if resp.ErrorCode != kerr.CoordinatorLoadInProgress.Code || h.group("g") != nil || len(h.log.All()) != 0 ||
		!strings.Contains(deref(resp.ErrorMessage), "0_3 is active on") {
		t.Fatalf("takeover: %d %q, group %v", resp.ErrorCode, deref(resp.ErrorMessage), h.group("g") != nil)
	}
}
