package route

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/streamshift/streamshift/migration"
	"github.com/streamshift/streamshift/proxy/proxytest"
	"github.com/streamshift/streamshift/upstream/anchor"
)

func join(group, member string) *kmsg.StreamsGroupHeartbeatRequest {
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group = group
	req.MemberID = member
	req.EndpointInformationEpoch = -1
	req.RebalanceTimeoutMillis = 30000
	pid := "process-" + member
	req.ProcessID = &pid
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	st.SubtopologyID = "0"
	st.SourceTopics = []string{"in"}
	topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{st}
	req.Topology = &topo
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	return req
}

// joinAndAssign joins member and heartbeats until it owns its tasks;
// it returns the member epoch.
func (e *env) joinAndAssign(group, member string) int32 {
	t := e.t
	if e.direct {
		return e.joinDirect(e.conn(allowAll), group, member)
	}
	resp, err := join(group, member).RequestWith(e.ctx, e.broker)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 0 {
		t.Fatalf("join: %v %s", kerr.ErrorForCode(resp.ErrorCode), deref(resp.ErrorMessage))
	}
	epoch := resp.MemberEpoch
	for resp.ActiveTasks == nil || len(resp.Status) != 0 {
		time.Sleep(50 * time.Millisecond)
		hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		hb.Group, hb.MemberID, hb.MemberEpoch = group, member, epoch
		if resp.ActiveTasks != nil {
			hb.ActiveTasks, hb.StandbyTasks, hb.WarmupTasks = resp.ActiveTasks, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		}
		if resp, err = hb.RequestWith(e.ctx, e.broker); err != nil {
			t.Fatal(err)
		}
		if resp.ErrorCode != 0 {
			t.Fatalf("heartbeat: %v %s", kerr.ErrorForCode(resp.ErrorCode), deref(resp.ErrorMessage))
		}
		epoch = resp.MemberEpoch
		if e.ctx.Err() != nil {
			t.Fatalf("never assigned: %+v", resp)
		}
	}
	return epoch
}

func (e *env) commit(group, member string, epoch int32, offset int64) error {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 9
	req.Group, req.MemberID, req.Generation = group, member, epoch
	topic := kmsg.NewOffsetCommitRequestTopic()
	topic.Topic = "in"
	for p := int32(0); p < 4; p++ {
		part := kmsg.NewOffsetCommitRequestTopicPartition()
		part.Partition, part.Offset = p, offset
		topic.Partitions = append(topic.Partitions, part)
	}
	req.Topics = []kmsg.OffsetCommitRequestTopic{topic}
	r, err := e.do(req)
	if err != nil {
		return err
	}
	resp := r.(*kmsg.OffsetCommitResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 4 {
		return errors.New("commit response does not answer every partition")
	}
	for _, p := range resp.Topics[0].Partitions {
		if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
			return err
		}
	}
	return nil
}

func (e *env) upstreamOffset(group string, p int32) int64 {
	offsets, err := e.adm.FetchOffsets(e.ctx, group)
	if err != nil {
		e.t.Fatal(err)
	}
	o, ok := offsets.Lookup("in", p)
	if !ok {
		return -1
	}
	return o.At
}

// TestOwnedGroupOffsets: a streams group served by the proxy commits and
// fetches offsets through it; upstream, the group holds the anchor member
// (protocol streamshift) and the offsets.
func TestOwnedGroupOffsets(t *testing.T) {
	e := newEnv(t, direct)
	epoch := e.joinAndAssign("app", "m1")

	if err := e.commit("app", "m1", epoch, 42); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if got := e.upstreamOffset("app", 2); got != 42 {
		t.Fatalf("upstream offset %d, want 42", got)
	}
	described, err := e.adm.DescribeGroups(e.ctx, "app")
	if err != nil {
		t.Fatal(err)
	}
	g := described["app"]
	if g.Protocol != anchor.ProtocolName || g.ProtocolType != "consumer" || len(g.Members) != 1 ||
		g.Members[0].InstanceID == nil || *g.Members[0].InstanceID != "streamshift-test" {
		t.Fatalf("upstream group: %+v", g)
	}
	meta, ok := g.Members[0].Join.AsConsumer()
	if !ok || len(meta.Topics) != 1 || meta.Topics[0] != "in" {
		t.Fatalf("anchor subscription %+v", g.Members[0].Join)
	}

	// Kafka's streams-group checks.
	if err := e.commit("app", "m1", epoch+1, 43); !errors.Is(err, kerr.StaleMemberEpoch) {
		t.Fatalf("commit with a newer epoch: %v, want STALE_MEMBER_EPOCH", err)
	}
	if err := e.commit("app", "nobody", epoch, 43); !errors.Is(err, kerr.UnknownMemberID) {
		t.Fatalf("commit of an unknown member: %v, want UNKNOWN_MEMBER_ID", err)
	}
	if got := e.upstreamOffset("app", 2); got != 42 {
		t.Fatalf("a refused commit reached the upstream: offset %d", got)
	}

	// OffsetFetch v9 with the member's epoch, then a wrong one.
	fetch := func(epoch int32) *kmsg.OffsetFetchResponse {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version = 9
		g := kmsg.NewOffsetFetchRequestGroup()
		g.Group, g.MemberID, g.MemberEpoch = "app", kmsg.StringPtr("m1"), epoch
		topic := kmsg.NewOffsetFetchRequestGroupTopic()
		topic.Topic, topic.Partitions = "in", []int32{0, 1, 2, 3}
		g.Topics = []kmsg.OffsetFetchRequestGroupTopic{topic}
		req.Groups = []kmsg.OffsetFetchRequestGroup{g}
		r, err := e.do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp := r.(*kmsg.OffsetFetchResponse)
		if len(resp.Groups) != 1 {
			t.Fatalf("fetch: %+v", resp)
		}
		return resp
	}
	resp := fetch(epoch)
	if err := kerr.ErrorForCode(resp.Groups[0].ErrorCode); err != nil || len(resp.Groups[0].Topics) != 1 || resp.Groups[0].Topics[0].Partitions[3].Offset != 42 {
		t.Fatalf("fetch: %v %+v", err, resp.Groups[0])
	}
	if resp := fetch(epoch + 5); resp.Groups[0].ErrorCode != kerr.StaleMemberEpoch.Code {
		t.Fatalf("fetch with a wrong epoch: %v, want STALE_MEMBER_EPOCH", kerr.ErrorForCode(resp.Groups[0].ErrorCode))
	}

	// A transactional commit (EOS) of the member.
	txnCommit(t, e, epoch, 77)
	if got := e.upstreamOffset("app", 1); got != 77 {
		t.Fatalf("upstream offset after the transaction %d, want 77", got)
	}
}

// txnCommit commits offset for partition 1 in a transaction, as an EOS
// Streams producer does (TxnOffsetCommit with the member id and epoch).
func txnCommit(t *testing.T, e *env, epoch int32, offset int64) {
	t.Helper()
	txid := "app-txn"
	init := kmsg.NewPtrInitProducerIDRequest()
	init.TransactionalID = &txid
	init.TransactionTimeoutMillis = 30000
	r, err := e.unrouted(init)
	ir, _ := r.(*kmsg.InitProducerIDResponse)
	if err != nil || ir.ErrorCode != 0 {
		t.Fatalf("init producer id: %v %v", err, kerr.ErrorForCode(ir.ErrorCode))
	}
	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = txid, ir.ProducerID, ir.ProducerEpoch, "app"
	r, err = e.unrouted(add)
	ar, _ := r.(*kmsg.AddOffsetsToTxnResponse)
	if err != nil || ar.ErrorCode != 0 {
		t.Fatalf("add offsets to txn: %v %v", err, kerr.ErrorForCode(ar.ErrorCode))
	}
	tc := kmsg.NewPtrTxnOffsetCommitRequest()
	tc.TransactionalID, tc.Group, tc.ProducerID, tc.ProducerEpoch = txid, "app", ir.ProducerID, ir.ProducerEpoch
	tc.MemberID, tc.Generation = "m1", epoch
	topic := kmsg.NewTxnOffsetCommitRequestTopic()
	topic.Topic = "in"
	part := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	part.Partition, part.Offset = 1, offset
	topic.Partitions = []kmsg.TxnOffsetCommitRequestTopicPartition{part}
	tc.Topics = []kmsg.TxnOffsetCommitRequestTopic{topic}
	r, err = e.do(tc)
	if err != nil {
		t.Fatal(err)
	}
	tr := r.(*kmsg.TxnOffsetCommitResponse)
	if len(tr.Topics) != 1 || len(tr.Topics[0].Partitions) != 1 || tr.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("txn offset commit: %+v", tr.Topics)
	}
	// A stale epoch is ILLEGAL_GENERATION below v6, as in Kafka.
	tc.Generation = epoch + 1
	if r, err = e.do(tc); err != nil {
		t.Fatal(err)
	}
	tr = r.(*kmsg.TxnOffsetCommitResponse)
	if tr.Topics[0].Partitions[0].ErrorCode != kerr.IllegalGeneration.Code {
		t.Fatalf("txn commit with a newer epoch: %v, want ILLEGAL_GENERATION", kerr.ErrorForCode(tr.Topics[0].Partitions[0].ErrorCode))
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = txid, ir.ProducerID, ir.ProducerEpoch, true
	r, err = e.unrouted(end)
	er, _ := r.(*kmsg.EndTxnResponse)
	if err != nil || er.ErrorCode != 0 {
		t.Fatalf("end txn: %v %v", err, kerr.ErrorForCode(er.ErrorCode))
	}
}

// TestLiveClassicGroupRefused: a streams join to a group that is a live
// classic group upstream gets GROUP_ID_NOT_FOUND, as Kafka answers.
func TestLiveClassicGroupRefused(t *testing.T) {
	e := newEnv(t, direct)
	e.liveClassicGroup("live")
	r, err := e.do(join("live", "m1"))
	if err != nil {
		t.Fatal(err)
	}
	resp := r.(*kmsg.StreamsGroupHeartbeatResponse)
	if resp.ErrorCode != kerr.GroupIDNotFound.Code || resp.ErrorMessage == nil {
		t.Fatalf("join of a live classic group: %v, want GROUP_ID_NOT_FOUND with a message", kerr.ErrorForCode(resp.ErrorCode))
	}
	// A classic commit to a group the proxy does not own passes untouched.
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Version, commit.Group, commit.Generation = 9, "other-classic", -1
	topic := kmsg.NewOffsetCommitRequestTopic()
	topic.Topic = "in"
	part := kmsg.NewOffsetCommitRequestTopicPartition()
	part.Offset = 5
	topic.Partitions = []kmsg.OffsetCommitRequestTopicPartition{part}
	commit.Topics = []kmsg.OffsetCommitRequestTopic{topic}
	if res := e.serve(e.conn(allowAll), commit); res.Kind != proxytest.Forwarded {
		t.Fatalf("commit of a group the proxy does not own: %v, want forwarded untouched", res.Kind)
	}
}

// liveClassicGroup makes group a Stable classic group upstream, with one
// consumer member subscribed to "in" (a JoinGroup with the member id the
// broker asks for, then the leader's SyncGroup).
func (e *env) liveClassicGroup(group string) {
	t := e.t
	meta := kmsg.NewConsumerMemberMetadata()
	meta.Topics = []string{"in"}
	jg := kmsg.NewPtrJoinGroupRequest()
	jg.Group, jg.SessionTimeoutMillis, jg.RebalanceTimeoutMillis, jg.ProtocolType = group, 60000, 60000, "consumer"
	jg.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: meta.AppendTo(nil)}}
	var joined *kmsg.JoinGroupResponse
	for range 2 { // the first answer may be MEMBER_ID_REQUIRED
		r, err := e.ctl.Request(e.ctx, jg)
		if err != nil {
			t.Fatal(err)
		}
		joined = r.(*kmsg.JoinGroupResponse)
		if joined.ErrorCode != kerr.MemberIDRequired.Code {
			break
		}
		jg.MemberID = joined.MemberID
	}
	if joined.ErrorCode != 0 {
		t.Fatalf("classic join: %v", kerr.ErrorForCode(joined.ErrorCode))
	}
	sg := kmsg.NewPtrSyncGroupRequest()
	sg.Group, sg.Generation, sg.MemberID = group, joined.Generation, joined.MemberID
	sg.ProtocolType, sg.Protocol = kmsg.StringPtr("consumer"), joined.Protocol
	assignment := kmsg.NewConsumerMemberAssignment()
	sg.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: joined.MemberID, MemberAssignment: assignment.AppendTo(nil)}}
	r, err := e.ctl.Request(e.ctx, sg)
	if err != nil {
		t.Fatal(err)
	}
	if code := r.(*kmsg.SyncGroupResponse).ErrorCode; code != 0 {
		t.Fatalf("classic sync: %v", kerr.ErrorForCode(code))
	}
	described, err := e.adm.DescribeGroups(e.ctx, group)
	if err != nil || described[group].State != "Stable" {
		t.Fatalf("classic group %s: %v %+v", group, err, described[group])
	}
}

// TestRestartWithoutState: after a restart without durable state, a member
// heartbeat gets UNKNOWN_MEMBER_ID (never GROUP_ID_NOT_FOUND, fatal to the
// Java client); the rejoin is accepted (the upstream group holds only the
// static anchor), and commits flow again through the same anchor instance.
func TestRestartWithoutState(t *testing.T) {
	e := newEnv(t, direct)
	heartbeat := func(hb *kmsg.StreamsGroupHeartbeatRequest) (*kmsg.StreamsGroupHeartbeatResponse, error) {
		r, err := e.do(hb)
		if err != nil {
			return nil, err
		}
		return r.(*kmsg.StreamsGroupHeartbeatResponse), nil
	}
	epoch := e.joinAndAssign("app", "m1")
	if err := e.commit("app", "m1", epoch, 10); err != nil {
		t.Fatal(err)
	}
	e.restart()

	hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.MemberEpoch = "app", "m1", epoch
	resp, err := heartbeat(hb)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("heartbeat after restart: %v, want UNKNOWN_MEMBER_ID", kerr.ErrorForCode(resp.ErrorCode))
	}
	// Another member's rejoin claimed the group, but its join has not
	// created it yet: still UNKNOWN_MEMBER_ID (seen on real Kafka).
	if err := e.own.Claim(e.ctx, "app"); err != nil {
		t.Fatal(err)
	}
	if resp, err = heartbeat(hb); err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != kerr.UnknownMemberID.Code {
		t.Fatalf("heartbeat with a claim pending: %v, want UNKNOWN_MEMBER_ID", kerr.ErrorForCode(resp.ErrorCode))
	}
	// A member leaving after the restart (Streams unsubscribes when a
	// commit fenced it) leaves cleanly.
	leave := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	leave.Group, leave.MemberID, leave.MemberEpoch = "app", "m2", -1
	if resp, err = heartbeat(leave); err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 0 || resp.MemberEpoch != -1 || resp.MemberID != "m2" {
		t.Fatalf("leave after restart: %v epoch %d", kerr.ErrorForCode(resp.ErrorCode), resp.MemberEpoch)
	}
	epoch = e.joinAndAssign("app", "m1")
	if err := e.commit("app", "m1", epoch, 11); err != nil {
		t.Fatalf("commit after restart: %v", err)
	}
	if got := e.upstreamOffset("app", 0); got != 11 {
		t.Fatalf("upstream offset %d, want 11", got)
	}
	described, err := e.adm.DescribeGroups(e.ctx, "app")
	if err != nil {
		t.Fatal(err)
	}
	if g := described["app"]; len(g.Members) != 1 || *g.Members[0].InstanceID != "streamshift-test" {
		t.Fatalf("upstream group after restart: %+v", g)
	}
}

// TestAnchorFencedMidFlight: the anchor is removed from the upstream group
// behind the proxy's back (its heartbeat has not noticed yet). The next
// commit gets a retriable COORDINATOR_NOT_AVAILABLE, never a fatal error,
// the anchor rejoins, and the retried commit lands upstream.
func TestAnchorFencedMidFlight(t *testing.T) {
	e := newEnv(t, direct, func(e *env) { e.anchorHeartbeat = time.Hour })
	epoch := e.joinAndAssign("app", "m1")
	if err := e.commit("app", "m1", epoch, 1); err != nil {
		t.Fatal(err)
	}
	leave := kmsg.NewPtrLeaveGroupRequest()
	leave.Group = "app"
	m := kmsg.NewLeaveGroupRequestMember()
	m.InstanceID = kmsg.StringPtr("streamshift-test")
	leave.Members = []kmsg.LeaveGroupRequestMember{m}
	if lr, err := leave.RequestWith(e.ctx, e.ctl); err != nil || lr.ErrorCode != 0 {
		t.Fatalf("remove the anchor: %v %+v", err, lr)
	}
	err := e.commit("app", "m1", epoch, 2)
	if !errors.Is(err, kerr.CoordinatorNotAvailable) {
		t.Fatalf("commit with a fenced anchor: %v, want COORDINATOR_NOT_AVAILABLE", err)
	}
	// The refused commit marked the anchor's generation fenced: the retry
	// waits for its rejoin (anchor.Manager.Generation) and lands.
	if err := e.commit("app", "m1", epoch, 2); err != nil {
		t.Fatalf("commit after the anchor rejoined: %v", err)
	}
	if got := e.upstreamOffset("app", 3); got != 2 {
		t.Fatalf("upstream offset %d, want 2", got)
	}
}

// TestOffsetsDownConverted: an upstream older than OffsetCommit/OffsetFetch
// v9 (Kafka 2.8: v8 and v7). The proxy still advertises v9, and a streams
// member's v9 commit and fetch reach the upstream at its versions, answered
// in the client's layout; a v9 commit of a group the proxy does not serve is
// down-converted too.
func TestOffsetsDownConverted(t *testing.T) {
	e := newEnv(t, func(e *env) { e.upstream = kversion.V2_8_0() })
	versions, err := kmsg.NewPtrApiVersionsRequest().RequestWith(e.ctx, e.cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range versions.ApiKeys {
		if (k.ApiKey == int16(kmsg.OffsetCommit) || k.ApiKey == int16(kmsg.OffsetFetch)) && k.MaxVersion != 9 {
			t.Fatalf("key %d advertised up to v%d, want v9", k.ApiKey, k.MaxVersion)
		}
	}
	epoch := e.joinAndAssign("app", "m1")
	if err := e.commit("app", "m1", epoch, 33); err != nil {
		t.Fatalf("v9 commit on a v8 upstream: %v", err)
	}
	if got := e.upstreamOffset("app", 0); got != 33 {
		t.Fatalf("upstream offset %d, want 33", got)
	}
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 9
	g := kmsg.NewOffsetFetchRequestGroup()
	g.Group, g.MemberID, g.MemberEpoch = "app", kmsg.StringPtr("m1"), epoch
	req.Groups = []kmsg.OffsetFetchRequestGroup{g}
	resp, err := req.RequestWith(e.ctx, e.broker)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Groups) != 1 || resp.Groups[0].Group != "app" || resp.Groups[0].ErrorCode != 0 ||
		len(resp.Groups[0].Topics) != 1 || len(resp.Groups[0].Topics[0].Partitions) != 4 || resp.Groups[0].Topics[0].Partitions[0].Offset != 33 {
		t.Fatalf("v9 fetch on a v7 upstream: %+v", resp.Groups)
	}
	// Not the proxy's group: forwarded, at the upstream's version.
	if err := e.commit("plain", "", -1, 7); err != nil {
		t.Fatalf("v9 commit of a plain group: %v", err)
	}
	if got := e.upstreamOffset("plain", 3); got != 7 {
		t.Fatalf("upstream offset %d, want 7", got)
	}
}

// TestOffsetsCappedOnCurrentUpstream: an upstream at current versions
// (OffsetCommit/OffsetFetch v10 and TxnOffsetCommit v6 name topics by id).
// The proxy advertises at most v9 / v9 / v5, so clients negotiate versions
// the routes intercept, and an owned group's commits are validated and
// rewritten instead of going upstream unchecked (where they would fail).
func TestOffsetsCappedOnCurrentUpstream(t *testing.T) {
	t.Run("streams", func(t *testing.T) { testOffsetsCapped(t, false) })
	t.Run("with migration", func(t *testing.T) { testOffsetsCapped(t, true) })
}

func testOffsetsCapped(t *testing.T, migrating bool) {
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(int16(kmsg.OffsetCommit), 10)
	vs.SetMaxKeyVersion(int16(kmsg.OffsetFetch), 10)
	vs.SetMaxKeyVersion(int16(kmsg.TxnOffsetCommit), 6)
	var mu sync.Mutex
	upVersions := map[int16]int16{}
	e := newEnv(t, func(e *env) {
		e.upstream = vs
		if migrating {
			e.migration = &migration.MigrationConfig{}
		}
	})
	e.cluster.KeepControl()
	for _, k := range []int16{int16(kmsg.OffsetCommit), int16(kmsg.TxnOffsetCommit)} {
		e.cluster.ControlKey(k, func(r kmsg.Request) (kmsg.Response, error, bool) {
			mu.Lock()
			upVersions[r.Key()] = max(upVersions[r.Key()], r.GetVersion())
			mu.Unlock()
			return nil, nil, false
		})
	}
	versions, err := kmsg.NewPtrApiVersionsRequest().RequestWith(e.ctx, e.cl)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int16]int16{int16(kmsg.OffsetCommit): 9, int16(kmsg.OffsetFetch): 9, int16(kmsg.TxnOffsetCommit): 5}
	for _, k := range versions.ApiKeys {
		if w, ok := want[k.ApiKey]; ok {
			if k.MaxVersion != w {
				t.Errorf("key %d advertised up to v%d, want v%d", k.ApiKey, k.MaxVersion, w)
			}
			delete(want, k.ApiKey)
		}
	}
	if len(want) != 0 {
		t.Fatalf("keys not advertised: %v", want)
	}
	epoch := e.joinAndAssign("app", "m1")
	if err := e.commit("app", "m1", epoch, 42); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if got := e.upstreamOffset("app", 2); got != 42 {
		t.Fatalf("upstream offset %d, want 42", got)
	}
	if err := e.commit("app", "m1", epoch+1, 43); !errors.Is(err, kerr.StaleMemberEpoch) {
		t.Fatalf("commit with a newer epoch: %v, want STALE_MEMBER_EPOCH (validated by the proxy)", err)
	}
	txnCommit(t, e, epoch, 77)
	if got := e.upstreamOffset("app", 1); got != 77 {
		t.Fatalf("upstream offset after the transaction %d, want 77", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if upVersions[int16(kmsg.OffsetCommit)] != 9 || upVersions[int16(kmsg.TxnOffsetCommit)] != 5 {
		t.Fatalf("versions reaching the upstream: %v, want OffsetCommit v9, TxnOffsetCommit v5", upVersions)
	}
}
