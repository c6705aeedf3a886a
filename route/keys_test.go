package route

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/proxy/proxytest"
)

// rowProblems is what a table row lacks of its key's facts (keys.go).
func rowProblems(rt route) []string {
	name := rt.key.Name()
	if _, ok := keys[rt.key]; !ok {
		return []string{fmt.Sprintf("%s is served but missing from the key table (keys.go)", name)}
	}
	var out []string
	if rt.refuse == nil {
		out = append(out, name+" has no refusal: a request refused or past its bound would get no answer (the connection closes)")
	}
	if rt.groups != nil && !rt.anyInstance && rt.group == nil && rt.split == nil {
		out = append(out, name+" names groups but has no group to gate by and no split: it would be served by an instance holding no state of the group")
	}
	if rt.split != nil && rt.groups == nil {
		out = append(out, name+" splits by owner but names no groups")
	}
	return out
}

// The route table: every served key has its facts, and each row has a
// refusal and a way to reach its group's owner; a row that lacks one
// fails here (the second half builds such rows).
func TestRouteRowsCarryTheirFacts(t *testing.T) {
	rs := &Routes{o: Options{Cluster: &fakeCluster{owners: []string{""}, hops: true}}, mig: &Migration{}}
	for _, rt := range rs.active() {
		for _, p := range rowProblems(rt) {
			t.Error(p)
		}
	}
	// Incomplete rows are caught.
	commit := keys[kmsg.OffsetCommit]
	noGroup := commit
	noGroup.group = nil
	noRefusal := commit
	noRefusal.refuse = nil
	for name, rt := range map[string]route{
		"a served key missing from the key table": {handler: handler{key: kmsg.Produce}},
		"a gated row without its group":           {handler: handler{key: kmsg.OffsetCommit}, keyFacts: noGroup},
		"a gated row without a refusal":           {handler: handler{key: kmsg.OffsetCommit}, keyFacts: noRefusal},
	} {
		if len(rowProblems(rt)) == 0 {
			t.Errorf("%s passes the table check", name)
		}
	}
}

// Every wire key with a handler file (NN_name.go, and the classic keys
// 11-14 that classic.go routes) has a row: a handler missing from the
// table is never registered.
func TestHandlerFilesHaveRows(t *testing.T) {
	ents, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	rs := &Routes{o: Options{Cluster: &fakeCluster{}}, mig: &Migration{}}
	rows := map[kmsg.Key]bool{}
	for _, rt := range rs.active() {
		rows[rt.key] = true
	}
	want := []kmsg.Key{kmsg.JoinGroup, kmsg.Heartbeat, kmsg.LeaveGroup, kmsg.SyncGroup}
	file := regexp.MustCompile(`^(\d+)_[a-z_]+\.go$`)
	for _, e := range ents {
		if m := file.FindStringSubmatch(e.Name()); m != nil {
			n, _ := strconv.Atoi(m[1])
			want = append(want, kmsg.Key(n))
		}
	}
	for _, k := range want {
		if !rows[k] {
			t.Errorf("key %d (%s) has a handler but no row in the route table", k, k.Name())
		}
	}
}

// groupRequest is a request of key naming the group "g" (a single-group
// request where the key allows one).
func groupRequest(t *testing.T, key kmsg.Key) kmsg.Request {
	switch key {
	case kmsg.OffsetCommit:
		r := kmsg.NewPtrOffsetCommitRequest()
		r.Group = "g"
		r.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0}}}}
		return r
	case kmsg.OffsetFetch:
		r := kmsg.NewPtrOffsetFetchRequest()
		r.Version, r.Group = 7, "g"
		return r
	case kmsg.JoinGroup:
		r := kmsg.NewPtrJoinGroupRequest()
		r.Version, r.Group = 5, "g"
		return r
	case kmsg.Heartbeat:
		r := kmsg.NewPtrHeartbeatRequest()
		r.Group = "g"
		return r
	case kmsg.LeaveGroup:
		r := kmsg.NewPtrLeaveGroupRequest()
		r.Group = "g"
		return r
	case kmsg.SyncGroup:
		r := kmsg.NewPtrSyncGroupRequest()
		r.Group = "g"
		return r
	case kmsg.DescribeGroups:
		r := kmsg.NewPtrDescribeGroupsRequest()
		r.Groups = []string{"g"}
		return r
	case kmsg.ConsumerGroupDescribe:
		r := kmsg.NewPtrConsumerGroupDescribeRequest()
		r.Groups = []string{"g"}
		return r
	case kmsg.TxnOffsetCommit:
		r := kmsg.NewPtrTxnOffsetCommitRequest()
		r.Group = "g"
		r.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0}}}}
		return r
	case kmsg.DescribeConfigs:
		r := kmsg.NewPtrDescribeConfigsRequest()
		r.Resources = []kmsg.DescribeConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeGroupConfig, ResourceName: "g"}}
		return r
	case kmsg.DeleteGroups:
		r := kmsg.NewPtrDeleteGroupsRequest()
		r.Groups = []string{"g"}
		return r
	case kmsg.IncrementalAlterConfigs:
		r := kmsg.NewPtrIncrementalAlterConfigsRequest()
		r.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeGroupConfig, ResourceName: "g"}}
		return r
	case kmsg.OffsetDelete:
		r := kmsg.NewPtrOffsetDeleteRequest()
		r.Group = "g"
		return r
	case kmsg.StreamsGroupHeartbeat:
		return heartbeatOf("g")
	case kmsg.StreamsGroupDescribe:
		r := kmsg.NewPtrStreamsGroupDescribeRequest()
		r.Groups = []string{"g"}
		return r
	}
	t.Fatalf("key %d (%s): no request naming a group in groupRequest; add one", key, key.Name())
	return nil
}

// codes is every non-zero ErrorCode field of v, at any depth.
func codes(v reflect.Value) []int16 {
	var out []int16
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			out = codes(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			out = append(out, codes(v.Index(i))...)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.Name == "ErrorCode" && f.Type.Kind() == reflect.Int16 {
				if c := v.Field(i).Int(); c != 0 {
					out = append(out, int16(c))
				}
			} else if f.IsExported() {
				out = append(out, codes(v.Field(i))...)
			}
		}
	}
	return out
}

// A request of every group key naming a group nobody owns right now
// reaches no handler: it is refused with a retriable code wherever its
// answer carries one, and Groups names its group.
func TestGroupKeysRefusedWithoutOwner(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rs := &Routes{o: Options{Cluster: &fakeCluster{owners: []string{""}, hops: true}}, mig: &Migration{}}
	for _, rt := range rs.active() {
		if rt.groups == nil || rt.anyInstance {
			continue
		}
		req := groupRequest(t, rt.key)
		if gs := Groups(req); !reflect.DeepEqual(gs, []string{"g"}) {
			t.Errorf("%s: Groups %q, want [g]", rt.key.Name(), gs)
		}
		reached := false
		rt.serve = nil
		rt = rs.row(route{handler: handler{key: rt.key, serve: func(_ *proxy.Request, out proxy.Outcome) {
			reached = true
			out.Forward()
		}}})
		res, err := proxytest.Serve(rt.serve, proxytest.NewConn(nil).Request(req)).Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if reached || res.Kind != proxytest.Responded {
			t.Errorf("%s of a group nobody owns: %v (reached the handler: %v)", rt.key.Name(), res.Kind, reached)
			continue
		}
		cs := codes(reflect.ValueOf(res.Response))
		if len(cs) == 0 {
			t.Errorf("%s refused without an error code: %+v", rt.key.Name(), res.Response)
		}
		for _, c := range cs {
			if c != kerr.CoordinatorNotAvailable.Code && c != kerr.NotCoordinator.Code {
				t.Errorf("%s refused with %v", rt.key.Name(), kerr.ErrorForCode(c))
			}
		}
	}
}

// A handler that never answers: past its row's bound the client gets the
// key's retriable error, not silence, and the handler's late answer is
// dropped.
func TestMuteBound(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const bound = 50 * time.Millisecond
	rs := &Routes{o: Options{MuteBound: bound}}
	late := make(chan proxy.Outcome, 1)
	rt := rs.row(route{handler: handle(func(_ *proxy.Request, _ *kmsg.OffsetCommitRequest, out proxy.Outcome) { late <- out })})
	start := time.Now()
	o := proxytest.Serve(rs.bounded(rt), proxytest.NewConn(nil).Request(groupRequest(t, kmsg.OffsetCommit)))
	res, err := o.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < bound {
		t.Errorf("answered after %v, before the bound %v", took, bound)
	}
	resp, ok := res.Response.(*kmsg.OffsetCommitResponse)
	if !ok || len(resp.Topics) != 1 || resp.Topics[0].Partitions[0].ErrorCode != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("past the bound: %+v", res)
	}
	(<-late).Forward() // the handler, too late
	if o.Result().Extra != 0 || o.Result().Kind != proxytest.Responded {
		t.Fatalf("the late answer reached the client: %+v", o.Result())
	}

	// In time: the handler's answer, and no refusal after it.
	rt = rs.row(route{handler: handle(func(_ *proxy.Request, _ *kmsg.OffsetCommitRequest, out proxy.Outcome) { out.Forward() })})
	o = proxytest.Serve(rs.bounded(rt), proxytest.NewConn(nil).Request(groupRequest(t, kmsg.OffsetCommit)))
	if res, err := o.Wait(ctx); err != nil || res.Kind != proxytest.Forwarded {
		t.Fatalf("in time: %+v %v", res, err)
	}
	time.Sleep(2 * bound)
	if o.Result().Extra != 0 {
		t.Fatalf("refused after the handler answered: %+v", o.Result())
	}
}

// The bounds: a held join its rebalance timeout (v0: its session
// timeout), a SyncGroup the sync wait, a hopped request the cluster's
// forward timeout, each with slack; anything else MuteBound.
func TestMuteBounds(t *testing.T) {
	rs := &Routes{o: Options{MuteBound: defaultMuteBound}}
	join := kmsg.NewPtrJoinGroupRequest()
	join.Version, join.RebalanceTimeoutMillis, join.SessionTimeoutMillis = 5, 300_000, 45_000
	join0 := kmsg.NewPtrJoinGroupRequest()
	join0.SessionTimeoutMillis, join0.RebalanceTimeoutMillis = 10_000, 300_000
	shortJoin := kmsg.NewPtrJoinGroupRequest()
	shortJoin.Version, shortJoin.RebalanceTimeoutMillis = 5, 1_000
	row := func(k kmsg.Key) route { return route{handler: handler{key: k}, keyFacts: keys[k]} }
	for _, tc := range []struct {
		req  kmsg.Request
		want time.Duration
	}{
		{join, 302 * time.Second},
		{join0, defaultMuteBound},
		{shortJoin, defaultMuteBound},
		{kmsg.NewPtrSyncGroupRequest(), 37 * time.Second},
		{heartbeatOf("g"), defaultMuteBound},
	} {
		if got := rs.muteBound(row(kmsg.Key(tc.req.Key())), tc.req); got != tc.want {
			t.Errorf("%s v%d: bound %v, want %v", kmsg.NameForKey(tc.req.Key()), tc.req.GetVersion(), got, tc.want)
		}
	}
	rs.o.Cluster = &fakeCluster{} // forward timeout 10 s: below MuteBound
	if got := rs.muteBound(row(kmsg.StreamsGroupHeartbeat), heartbeatOf("g")); got != defaultMuteBound {
		t.Errorf("cluster: bound %v", got)
	}
	rs.o.MuteBound = time.Second
	if got := rs.muteBound(row(kmsg.StreamsGroupHeartbeat), heartbeatOf("g")); got != 12*time.Second {
		t.Errorf("cluster: bound %v, want the forward timeout and slack", got)
	}
}
