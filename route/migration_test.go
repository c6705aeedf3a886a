package route

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/migration"
	"github.com/streamshift/streamshift/proxy/proxytest"
)

// classicMember is a hand-written classic Kafka Streams member (protocol
// "stream") of group "legacy" talking through the proxy.
type classicMember struct {
	e          *env
	t          testing.TB
	id         string
	generation int32
	owned      []classicstreams.TopicPartition
	// broker is the member's own connection (a client of its own);
	// nil: the env's.
	broker *kgo.Broker
	// sessionMs and rebalanceMs: 30 s each if 0.
	sessionMs, rebalanceMs int32
	// pc is the member's connection in a direct env (no proxy).
	pc *proxytest.Conn
}

// send is what the member gets for req: through the proxy on its
// connection, or in a direct env through the route on a connection of its
// own (env.do).
func (c *classicMember) send(req kmsg.Request) kmsg.Response {
	c.t.Helper()
	if c.e.direct {
		if c.pc == nil {
			c.pc = c.e.conn(allowAll)
		}
		c.e.negotiate(req)
		return c.e.through(c.pc, req)
	}
	resp, err := c.conn().Request(c.e.ctx, req)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

func (c *classicMember) conn() *kgo.Broker {
	if c.broker != nil {
		return c.broker
	}
	return c.e.broker
}

// joinRequest is the member's JoinGroup (v9 unless the client lowers it).
func (c *classicMember) joinRequest() *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Group, req.MemberID, req.ProtocolType = "legacy", c.id, "consumer"
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 30000, 30000
	if c.sessionMs > 0 {
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = c.sessionMs, c.rebalanceMs
	}
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name, p.Metadata = "stream", c.metadata()
	req.Protocols = []kmsg.JoinGroupRequestProtocol{p}
	return req
}

func (c *classicMember) metadata() []byte {
	info := &classicstreams.SubscriptionInfo{Version: 11, LatestSupportedVersion: 11,
		ProcessID: classicstreams.ProcessID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}}
	for _, tp := range c.owned {
		info.TaskOffsetSums = append(info.TaskOffsetSums, classicstreams.TaskOffsetSum{Task: classicstreams.TaskID{Partition: tp.Partition}, OffsetSum: -2})
	}
	ud, err := info.Encode()
	if err != nil {
		c.t.Fatal(err)
	}
	sub := &classicstreams.ConsumerSubscription{Version: 3, Topics: []string{"in"}, UserData: ud, OwnedPartitions: c.owned, GenerationID: c.generation}
	return sub.Encode()
}

// join runs JoinGroup (with MEMBER_ID_REQUIRED) and returns the answer.
func (c *classicMember) join() *kmsg.JoinGroupResponse {
	for {
		resp := c.send(c.joinRequest()).(*kmsg.JoinGroupResponse)
		if resp.ErrorCode == kerr.MemberIDRequired.Code {
			c.id = resp.MemberID
			continue
		}
		if resp.ErrorCode != 0 {
			c.t.Fatalf("join: %v", kerr.ErrorForCode(resp.ErrorCode))
		}
		c.id, c.generation = resp.MemberID, resp.Generation
		return resp
	}
}

// sync runs SyncGroup; a leader assigns every partition of "in" to itself.
func (c *classicMember) sync(leader bool) []classicstreams.TopicPartition {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group, req.MemberID, req.Generation = "legacy", c.id, c.generation
	pt, pn := "consumer", "stream"
	req.ProtocolType, req.Protocol = &pt, &pn
	if leader {
		var tps []classicstreams.TopicPartition
		var tasks []classicstreams.TaskID
		for p := int32(0); p < 4; p++ {
			tps = append(tps, classicstreams.TopicPartition{Topic: "in", Partition: p})
			tasks = append(tasks, classicstreams.TaskID{Partition: p})
		}
		ai := &classicstreams.AssignmentInfo{Version: 11, CommonlySupportedVersion: 11, ActiveTasks: tasks}
		aib, err := ai.Encode()
		if err != nil {
			c.t.Fatal(err)
		}
		ca := &classicstreams.ConsumerAssignment{Version: 3, AssignedPartitions: tps, UserData: aib}
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID, a.MemberAssignment = c.id, ca.Encode()
		req.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{a}
	}
	resp := c.send(req).(*kmsg.SyncGroupResponse)
	if resp.ErrorCode != 0 {
		c.t.Fatalf("sync: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	ca, err := classicstreams.DecodeConsumerAssignment(resp.MemberAssignment)
	if err != nil {
		c.t.Fatalf("sync assignment: %v", err)
	}
	c.owned = ca.AssignedPartitions
	return ca.AssignedPartitions
}

func (c *classicMember) heartbeat() int16 {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Group, req.MemberID, req.Generation = "legacy", c.id, c.generation
	return c.send(req).(*kmsg.HeartbeatResponse).ErrorCode
}

func (c *classicMember) commit(offset int64) int16 {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.MemberID, req.Generation = "legacy", c.id, c.generation
	tp := kmsg.NewOffsetCommitRequestTopic()
	tp.Topic = "in"
	for _, owned := range c.owned {
		p := kmsg.NewOffsetCommitRequestTopicPartition()
		p.Partition, p.Offset = owned.Partition, offset
		tp.Partitions = append(tp.Partitions, p)
	}
	req.Topics = []kmsg.OffsetCommitRequestTopic{tp}
	resp := c.send(req).(*kmsg.OffsetCommitResponse)
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				return p.ErrorCode
			}
		}
	}
	return 0
}

// classicLeader is a classic member (on broker, nil: the env's connection)
// that formed group "legacy" upstream alone: joined, synced as its leader
// (every partition of "in"), and heartbeating.
func (e *env) classicLeader(broker *kgo.Broker) *classicMember {
	e.t.Helper()
	c := &classicMember{e: e, t: e.t, broker: broker}
	c.join()
	c.sync(true)
	if code := c.heartbeat(); code != 0 {
		e.t.Fatalf("heartbeat upstream: %v", kerr.ErrorForCode(code))
	}
	return c
}

// takeOver joins streams member s1 to "legacy", a live classic group
// upstream: the join takes the group over.
func (e *env) takeOver() {
	e.t.Helper()
	if resp, err := e.do(join("legacy", "s1")); err != nil || resp.(*kmsg.StreamsGroupHeartbeatResponse).ErrorCode != 0 {
		e.t.Fatalf("takeover join: %v %v", err, resp)
	}
}

// TestOnlineTakeover: a classic "stream" member holds group "legacy"
// upstream through the proxy; a streams-protocol member joins; the proxy
// takes the group over (the upstream group then holds only the anchor), the
// classic member is moved by Heartbeat REBALANCE_IN_PROGRESS only (never
// ILLEGAL_GENERATION or UNKNOWN_MEMBER_ID), gives tasks up, and its
// commits keep going through, under the anchor, with its own generation.
func TestOnlineTakeover(t *testing.T) {
	clock := coordinator.NewManualClock(time.Now())
	e := newEnv(t, direct, withMigration(migration.MigrationBidirectional), func(e *env) { e.clock = clock })
	c := &classicMember{e: e, t: t}
	if jr := c.join(); jr.LeaderID != c.id {
		t.Fatalf("the only classic member is not the leader: %+v", jr)
	}
	if got := c.sync(true); len(got) != 4 {
		t.Fatalf("classic member owns %v", got)
	}
	if code := c.heartbeat(); code != 0 {
		t.Fatalf("heartbeat upstream: %v", kerr.ErrorForCode(code))
	}
	if code := c.commit(3); code != 0 {
		t.Fatalf("classic commit upstream: %v", kerr.ErrorForCode(code))
	}
	classicGen := c.generation

	r, err := e.do(join("legacy", "s1"))
	if err != nil {
		t.Fatal(err)
	}
	resp := r.(*kmsg.StreamsGroupHeartbeatResponse)
	if resp.ErrorCode != 0 {
		t.Fatalf("streams join of a live classic group: %v %s", kerr.ErrorForCode(resp.ErrorCode), deref(resp.ErrorMessage))
	}
	if !e.coord.Owns("legacy") {
		t.Fatal("the coordinator does not hold the group after the takeover")
	}
	described, err := e.adm.DescribeGroups(e.ctx, "legacy")
	if err != nil {
		t.Fatal(err)
	}
	up := described["legacy"]
	if len(up.Members) != 1 || up.Protocol != "streamshift" {
		t.Fatalf("upstream group after the takeover: state %s protocol %s members %d, want the anchor only", up.State, up.Protocol, len(up.Members))
	}
	// The classic member's session lives in the proxy now, at its generation.
	if code := c.commit(5); code != 0 {
		t.Fatalf("classic commit at generation %d after the takeover: %v", classicGen, kerr.ErrorForCode(code))
	}
	if got := e.upstreamOffset("legacy", 0); got != 5 {
		t.Fatalf("upstream offset %d, want 5", got)
	}

	// The streams member heartbeats; the classic member is pulled into a
	// rejoin and gives up what s1 is to get: the new target assignment
	// waits for the group's assignment interval (1 s), passed on the
	// coordinator's clock each round.
	epoch := resp.MemberEpoch
	for {
		clock.Advance(streams.DefaultAssignmentInterval)
		hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		hb.Group, hb.MemberID, hb.MemberEpoch = "legacy", "s1", epoch
		hb.ActiveTasks, hb.StandbyTasks, hb.WarmupTasks = resp.ActiveTasks, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		if hb.ActiveTasks == nil {
			hb.ActiveTasks = []kmsg.TaskIDs{}
		}
		r, err := e.do(hb)
		if err != nil {
			t.Fatal(err)
		}
		next := r.(*kmsg.StreamsGroupHeartbeatResponse)
		if next.ErrorCode != 0 {
			t.Fatalf("streams heartbeat: %v %s", kerr.ErrorForCode(next.ErrorCode), deref(next.ErrorMessage))
		}
		if next.ActiveTasks != nil {
			resp = next
		}
		epoch = next.MemberEpoch

		switch code := c.heartbeat(); code {
		case 0:
		case kerr.RebalanceInProgress.Code:
			c.join()
			c.sync(false)
		default:
			t.Fatalf("classic heartbeat after the takeover: %v (only REBALANCE_IN_PROGRESS may move it)", kerr.ErrorForCode(code))
		}
		streamsTasks := 0
		for _, ts := range resp.ActiveTasks {
			streamsTasks += len(ts.Partitions)
		}
		if streamsTasks > 0 && len(c.owned) > 0 && streamsTasks+len(c.owned) == 4 {
			break
		}
		if e.ctx.Err() != nil {
			t.Fatalf("tasks never split: streams member %v, classic member %v", resp.ActiveTasks, c.owned)
		}
	}
	if code := c.commit(7); code != 0 {
		t.Fatalf("classic commit after its rejoin: %v", kerr.ErrorForCode(code))
	}
}

// TestTakeoverCreatesMissingInternalTopics: the streams member of a live
// classic group joins with a topology whose changelog does not exist (it
// was deleted, or the store is new): the takeover goes on, the member gets
// status MISSING_INTERNAL_TOPICS, and the changelog is created upstream as
// for a Kafka 4.4 join. Before, the takeover failed on every heartbeat
// ("the topology is not ready") and nothing was created.
func TestTakeoverCreatesMissingInternalTopics(t *testing.T) {
	e := newEnv(t, direct, withMigration(migration.MigrationBidirectional))
	e.classicLeader(nil)
	req := join("legacy", "s1")
	req.Topology.Subtopologies[0].StateChangelogTopics = []kmsg.TopicInfo{{Topic: "legacy-store-changelog"}}
	r, err := e.do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp := r.(*kmsg.StreamsGroupHeartbeatResponse)
	missing := slices.ContainsFunc(resp.Status, func(s kmsg.StreamsGroupHeartbeatResponseStatus) bool {
		return s.StatusCode == statusMissingInternalTopics
	})
	if resp.ErrorCode != 0 || !missing || !e.coord.Owns("legacy") {
		t.Fatalf("takeover with a missing changelog: %v %s status %+v owned %v", kerr.ErrorForCode(resp.ErrorCode), deref(resp.ErrorMessage), resp.Status, e.coord.Owns("legacy"))
	}
	// The creation runs on the control plane: each look is a round trip
	// to the cluster, until it shows the topic.
	for {
		topics, err := e.adm.ListTopics(e.ctx, "legacy-store-changelog")
		if err == nil && topics.Has("legacy-store-changelog") && len(topics["legacy-store-changelog"].Partitions) == 4 {
			return
		}
		if e.ctx.Err() != nil {
			t.Fatalf("changelog not created upstream: %v %v", topics, err)
		}
	}
}

// TestTakeoverRefusedByPolicy: with migration.policy=downgrade (no
// upgrade) a streams join to a live classic group is refused as Kafka does,
// and the classic member is untouched.
func TestTakeoverRefusedByPolicy(t *testing.T) {
	e := newEnv(t, direct, withMigration(migration.MigrationDowngrade))
	c := e.classicLeader(nil)
	r, err := e.do(join("legacy", "s1"))
	if err != nil {
		t.Fatal(err)
	}
	resp := r.(*kmsg.StreamsGroupHeartbeatResponse)
	if resp.ErrorCode != kerr.GroupIDNotFound.Code {
		t.Fatalf("streams join with upgrade not allowed: %v, want GROUP_ID_NOT_FOUND", kerr.ErrorForCode(resp.ErrorCode))
	}
	if e.coord.Owns("legacy") {
		t.Fatal("the group was taken over")
	}
	if code := c.heartbeat(); code != 0 {
		t.Fatalf("classic heartbeat after the refused join: %v", kerr.ErrorForCode(code))
	}
}

// TestOnlineHandBack: after a takeover, the streams-protocol member leaves
// while the classic member stays: the classic member is pulled into a
// rejoin (REBALANCE_IN_PROGRESS), its JoinGroup is held while the anchor
// leaves, then forwarded upstream with an empty member id; it gets
// MEMBER_ID_REQUIRED, rejoins upstream and leads the classic group again,
// which no longer holds the anchor.
func TestOnlineHandBack(t *testing.T) {
	e := newEnv(t, direct, withMigration(migration.MigrationBidirectional))
	c := e.classicLeader(nil)
	e.takeOver()
	leave := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	leave.Group, leave.MemberID, leave.MemberEpoch = "legacy", "s1", -1
	if lr, err := e.do(leave); err != nil || lr.(*kmsg.StreamsGroupHeartbeatResponse).ErrorCode != 0 {
		t.Fatalf("streams leave: %v %v", err, lr)
	}
	// The member heartbeats and rejoins as a consumer does, until a rejoin
	// is handed back. A heartbeat of a classic-only group puts up the
	// hand-back's barrier after it is answered (migration/handback.go:
	// AfterHeartbeat), so a rejoin at once after s1 left may still land in
	// the streams group (the member's id kept); the next one is held.
	proxyID := c.id
	var jr *kmsg.JoinGroupResponse
	for jr == nil {
		switch code := c.heartbeat(); code {
		case 0:
		case kerr.RebalanceInProgress.Code:
			if next := c.join(); c.id != proxyID {
				jr = next
			} else {
				c.sync(false)
			}
		default:
			t.Fatalf("classic heartbeat before the hand-back: %v", kerr.ErrorForCode(code))
		}
		if e.ctx.Err() != nil {
			t.Fatal("the classic member was never handed back upstream")
		}
	}
	if jr.LeaderID != c.id {
		t.Fatalf("the classic member does not lead the upstream group: %+v", jr)
	}
	if got := c.sync(true); len(got) != 4 {
		t.Fatalf("classic member owns %v after the hand-back", got)
	}
	up := e.handedBack()
	if len(up.Members) != 1 || up.Protocol != "stream" || up.Members[0].MemberID != c.id {
		t.Fatalf("upstream group after the hand-back: state %s protocol %s members %+v", up.State, up.Protocol, up.Members)
	}
	if code := c.commit(9); code != 0 {
		t.Fatalf("classic commit upstream after the hand-back: %v", kerr.ErrorForCode(code))
	}
}

// handedBack checks that the coordinator no longer holds group "legacy"
// and returns the upstream's description of it.
func (e *env) handedBack() kadm.DescribedGroup {
	e.t.Helper()
	if e.coord.Owns("legacy") {
		e.t.Fatal("the coordinator still holds the group after the hand-back")
	}
	described, err := e.adm.DescribeGroups(e.ctx, "legacy")
	if err != nil {
		e.t.Fatal(err)
	}
	return described["legacy"]
}

// memberConn opens a connection of its own to the group's coordinator
// through the proxy, as a client with clientID.
func (e *env) memberConn(clientID string) *kgo.Broker {
	e.t.Helper()
	return e.coordinatorOf("legacy", e.client(kgo.ClientID(clientID)))
}

// TestHandBackOnMembersConnections: two classic members, each on a
// connection of its own with its own client id (one carried over by the
// takeover, one that joined the streams group after it), are handed back.
// Each held JoinGroup goes upstream on its member's connection with an
// empty member id: each member gets exactly one answer, MEMBER_ID_REQUIRED
// with an id the broker made from its own client id (not streamshift's
// control-plane client's "kgo-…"), and both then form the upstream group
// on the same connections, which answer every later request in order.
//
// s1, the last streams member, leaves for good: it is kept for a successor
// of its process (coordinator/streams/departed.go) for the group's session
// timeout, 10 s here, before the barrier is Ready.
func TestHandBackOnMembersConnections(t *testing.T) {
	e := newEnv(t, withMigration(migration.MigrationBidirectional), func(e *env) { e.streamsSession = 10 * time.Second })
	a := e.classicLeader(e.memberConn("app-a"))
	e.takeOver()
	b := &classicMember{e: e, t: t, broker: e.memberConn("app-b")}
	b.join() // served by the streams group now
	b.sync(false)
	leave := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	leave.Group, leave.MemberID, leave.MemberEpoch = "legacy", "s1", -1
	if lr, err := leave.RequestWith(e.ctx, e.broker); err != nil || lr.ErrorCode != 0 {
		t.Fatalf("streams leave: %v %v", err, lr)
	}
	members := []*classicMember{a, b}
	pulled := map[*classicMember]bool{}
	deadline := time.Now().Add(20 * time.Second)
	for len(pulled) < 2 {
		for _, c := range members {
			if pulled[c] {
				continue
			}
			switch code := c.heartbeat(); code {
			case kerr.RebalanceInProgress.Code:
				pulled[c] = true
			case 0:
			default:
				t.Fatalf("classic heartbeat before the hand-back: %v", kerr.ErrorForCode(code))
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the classic members were never pulled into the hand-back")
		}
		time.Sleep(100 * time.Millisecond)
	}

	// At the barrier each member first revokes everything: its JoinGroup
	// is answered and its SyncGroup gives it nothing (docs/fast-roll.md
	// §11), so it enters the upstream group running no task.
	// (A member that owns nothing is held at once.)
	for _, c := range members {
		if len(c.owned) == 0 {
			continue
		}
		c.join()
		if got := c.sync(false); len(got) != 0 {
			t.Fatalf("%s: SyncGroup at the barrier gave %v, want nothing", c.id, got)
		}
	}

	// Both rejoin owning nothing with the ids the proxy gave them; the
	// joins are held until the barrier is complete, then forwarded.
	type answer struct {
		c    *classicMember
		resp *kmsg.JoinGroupResponse
		err  error
	}
	answers := make(chan answer, 2)
	for _, c := range members {
		go func() {
			resp, err := c.joinRequest().RequestWith(e.ctx, c.conn())
			answers <- answer{c, resp, err}
		}()
	}
	for range members {
		an := <-answers
		if an.err != nil {
			t.Fatalf("held join: %v", an.err)
		}
		client := map[*classicMember]string{a: "app-a", b: "app-b"}[an.c]
		if an.resp.ErrorCode != kerr.MemberIDRequired.Code || !strings.HasPrefix(an.resp.MemberID, client+"-") {
			t.Fatalf("%s: held join answered %v with member id %q, want MEMBER_ID_REQUIRED and an id of the broker's for client %s",
				an.c.id, kerr.ErrorForCode(an.resp.ErrorCode), an.resp.MemberID, client)
		}
		an.c.id = an.resp.MemberID
	}

	// The classic group forms upstream on the members' connections: each
	// runs the classic cycle (join, sync, heartbeats) until the group is
	// Stable with both.
	ctx, cancel := context.WithCancel(e.ctx)
	errs := make(chan error, 2)
	for _, c := range members {
		go func() { errs <- c.classicCycle(ctx) }()
	}
	for {
		described, err := e.adm.DescribeGroups(e.ctx, "legacy")
		if err != nil {
			t.Fatal(err)
		}
		if g := described["legacy"]; g.State == "Stable" && len(g.Members) == 2 {
			break
		}
		select {
		case err := <-errs:
			t.Fatalf("classic cycle upstream: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline.Add(30 * time.Second)) {
			t.Fatal("the upstream group never became Stable with both members")
		}
	}
	cancel()
	for range members {
		if err := <-errs; err != nil {
			t.Fatalf("classic cycle upstream: %v", err)
		}
	}
	up := e.handedBack()
	if up.Protocol != "stream" || len(up.Members) != 2 {
		t.Fatalf("upstream group after the hand-back: state %s protocol %s members %+v", up.State, up.Protocol, up.Members)
	}
	for _, m := range up.Members {
		if strings.HasPrefix(m.MemberID, "kgo-") || m.ClientID == "kgo" || !strings.HasPrefix(m.MemberID, m.ClientID+"-") {
			t.Fatalf("upstream member %s (client %s): not joined on the member's own connection", m.MemberID, m.ClientID)
		}
	}
}

// classicCycle runs a classic member until ctx ends: JoinGroup, SyncGroup
// (a leader assigns everything to itself), Heartbeat every 100 ms, and again
// on REBALANCE_IN_PROGRESS. Any other error, or a lost answer, ends it.
func (c *classicMember) classicCycle(ctx context.Context) error {
	pt, pn := "consumer", "stream"
	for {
		jr, err := c.joinRequest().RequestWith(ctx, c.conn())
		if ended, rejoin, err := c.answered(ctx, "join", err, func() int16 { return jr.ErrorCode }); ended || err != nil {
			return err
		} else if rejoin {
			continue
		}
		c.generation = jr.Generation
		sr := kmsg.NewPtrSyncGroupRequest()
		sr.Group, sr.MemberID, sr.Generation, sr.ProtocolType, sr.Protocol = "legacy", c.id, c.generation, &pt, &pn
		if jr.LeaderID == c.id {
			for _, m := range jr.Members {
				a := kmsg.NewSyncGroupRequestGroupAssignment()
				a.MemberID = m.MemberID
				ca := &classicstreams.ConsumerAssignment{Version: 3}
				if m.MemberID == c.id {
					ca.AssignedPartitions = []classicstreams.TopicPartition{{Topic: "in", Partition: 0}}
				}
				a.MemberAssignment = ca.Encode()
				sr.GroupAssignment = append(sr.GroupAssignment, a)
			}
		}
		sresp, err := sr.RequestWith(ctx, c.conn())
		if ended, rejoin, err := c.answered(ctx, "sync", err, func() int16 { return sresp.ErrorCode }); ended || err != nil {
			return err
		} else if rejoin {
			continue
		}
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(100 * time.Millisecond):
			}
			hr := kmsg.NewPtrHeartbeatRequest()
			hr.Group, hr.MemberID, hr.Generation = "legacy", c.id, c.generation
			hresp, err := hr.RequestWith(ctx, c.conn())
			if ended, rejoin, err := c.answered(ctx, "heartbeat", err, func() int16 { return hresp.ErrorCode }); ended || err != nil {
				return err
			} else if rejoin {
				break
			}
		}
	}
}

// answered sorts an answer of classicCycle: ended (ctx is done: the cycle
// ends without error), rejoin (REBALANCE_IN_PROGRESS) or a failure (a lost
// answer or any other error). code is read only when the request got an
// answer.
func (c *classicMember) answered(ctx context.Context, what string, err error, code func() int16) (ended, rejoin bool, fail error) {
	switch {
	case ctx.Err() != nil:
		return true, false, nil
	case err != nil:
		return false, false, fmt.Errorf("%s: %s: %w", c.id, what, err)
	case code() == kerr.RebalanceInProgress.Code:
		return false, true, nil
	case code() != 0:
		return false, false, fmt.Errorf("%s: %s: %v", c.id, what, kerr.ErrorForCode(code()))
	}
	return false, false, nil
}

// TestClassicGroupsNotServedGoStraightUpstream: with the migration on, a
// plain consumer group's JoinGroup, SyncGroup, Heartbeat and LeaveGroup go
// upstream without a trip through the translator and the coordinator, and
// so do a classic Streams group's until it is taken over; after the
// takeover its requests are served here, while the plain group's still go
// straight up. Observing what the classic group's heartbeats show
// (migration/observer.go) queues no work on its idle executor.
func TestClassicGroupsNotServedGoStraightUpstream(t *testing.T) {
	e := newEnv(t, withMigration(migration.MigrationBidirectional))
	m := e.routes.mig
	assigned := make(chan struct{}, 1)
	plain, err := kgo.NewClient(kgo.SeedBrokers(e.addr), kgo.ClientID("plain"), kgo.ConsumerGroup("plain"), kgo.ConsumeTopics("in"),
		kgo.HeartbeatInterval(100*time.Millisecond),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
			select {
			case assigned <- struct{}{}:
			default:
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for e.ctx.Err() == nil && !plain.PollFetches(e.ctx).IsClientClosed() {
		}
	}()
	select {
	case <-assigned:
	case <-e.ctx.Done():
		t.Fatal("the plain consumer never got its partitions")
	}
	time.Sleep(300 * time.Millisecond) // a few heartbeats
	plain.Close()                      // LeaveGroup
	if d, tr := m.direct.Load(), m.translated.Load(); tr != 0 || d < 4 {
		t.Fatalf("plain consumer group: %d requests forwarded directly, %d through the translator; want join, sync, heartbeats and leave directly", d, tr)
	}

	c := e.classicLeader(nil)
	if tr := m.translated.Load(); tr != 0 {
		t.Fatalf("%d requests of a classic group not taken over went through the translator", tr)
	}
	queued := e.coord.QueuedWork()
	for range 5 {
		if code := c.heartbeat(); code != 0 {
			t.Fatalf("classic heartbeat upstream: %v", kerr.ErrorForCode(code))
		}
	}
	if n := e.coord.QueuedWork() - queued; n != 0 {
		t.Fatalf("5 heartbeats of a classic group not taken over queued %d works on its executor, want none", n)
	}
	e.takeOver()
	before := m.direct.Load()
	if code := c.heartbeat(); code != 0 && code != kerr.RebalanceInProgress.Code {
		t.Fatalf("classic heartbeat after the takeover: %v", kerr.ErrorForCode(code))
	}
	if m.translated.Load() != 1 || m.direct.Load() != before {
		t.Fatalf("heartbeat of a served group: %d translated, %d direct", m.translated.Load(), m.direct.Load()-before)
	}
}

// TestTakeoverDrainsDirectForwards: a classic JoinGroup forwarded straight
// upstream (the group is not served yet) counts in flight for the group's
// drain while it waits upstream; a streams member joining then waits for
// it, finds the upstream group rebalancing and leaves it classic (a
// retriable error), so the classic round completes upstream as if the
// proxy were not there.
func TestTakeoverDrainsDirectForwards(t *testing.T) {
	e := newEnv(t, withMigration(migration.MigrationBidirectional))
	m := e.routes.mig
	a := &classicMember{e: e, t: t, sessionMs: 6000, rebalanceMs: 2000}
	a.join()
	a.sync(true)
	b := &classicMember{e: e, t: t, broker: e.memberConn("app-b"), sessionMs: 6000, rebalanceMs: 2000}
	bJoined := make(chan struct{})
	go func() {
		defer close(bJoined)
		var resp *kmsg.JoinGroupResponse
		var err error
		for {
			resp, err = b.joinRequest().RequestWith(e.ctx, b.conn())
			if err != nil || resp.ErrorCode != kerr.MemberIDRequired.Code {
				break
			}
			b.id = resp.MemberID
		}
		if err != nil || resp.ErrorCode != 0 {
			t.Errorf("b's join upstream: %v %v", err, resp)
		}
	}()
	// b's join waits upstream for a, which does not rejoin.
	deadline := time.Now().Add(10 * time.Second)
	for {
		described, err := e.adm.DescribeGroups(e.ctx, "legacy")
		if err != nil {
			t.Fatal(err)
		}
		if described["legacy"].State == "PreparingRebalance" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the upstream group never rebalanced for b: %s", described["legacy"].State)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if inflight := m.a.o.Coordinator.ClassicInFlight("legacy"); inflight != 1 || m.translated.Load() != 0 {
		t.Fatalf("b's JoinGroup waiting upstream: %d in flight for the drain, %d through the translator; want 1, 0", inflight, m.translated.Load())
	}
	resp, err := join("legacy", "s1").RequestWith(e.ctx, e.broker)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("streams join while a classic JoinGroup is in flight upstream: %v, want COORDINATOR_LOAD_IN_PROGRESS", kerr.ErrorForCode(resp.ErrorCode))
	}
	<-bJoined
	if e.coord.Owns("legacy") {
		t.Fatal("the group was taken over while rebalancing upstream")
	}
}
