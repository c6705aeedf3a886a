package route

import (
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/proxy/proxytest"
)

// TestRoutesTable: the keys registered, their versions, which are
// advertised and which capped, with the migration off and on. These are
// the registrations streamshift made before the table existed (Register,
// RegisterAdmin, then EnableMigration replacing 8, 9, 28 and 88); a change
// here changes what clients negotiate.
func TestRoutesTable(t *testing.T) {
	type reg struct {
		max               int16
		advertise, capped bool
	}
	top := func(k kmsg.Key) int16 { return kmsg.RequestForKey(int16(k)).MaxVersion() }
	// An upstream older than kmsg for the keys whose range it decides.
	up := map[int16]int16{
		int16(kmsg.JoinGroup): 7, int16(kmsg.Heartbeat): 3, int16(kmsg.LeaveGroup): 4, int16(kmsg.SyncGroup): 5,
		int16(kmsg.TxnOffsetCommit): 3, int16(kmsg.OffsetCommit): 8, int16(kmsg.OffsetFetch): 7,
	}
	want := map[kmsg.Key]reg{
		kmsg.OffsetCommit:            {9, true, true},
		kmsg.OffsetFetch:             {9, true, true},
		kmsg.DescribeGroups:          {top(kmsg.DescribeGroups), true, false},
		kmsg.ListGroups:              {top(kmsg.ListGroups), false, false},
		kmsg.TxnOffsetCommit:         {3, false, true},
		kmsg.DescribeConfigs:         {top(kmsg.DescribeConfigs), false, false},
		kmsg.DeleteGroups:            {top(kmsg.DeleteGroups), false, false},
		kmsg.IncrementalAlterConfigs: {top(kmsg.IncrementalAlterConfigs), false, false},
		kmsg.OffsetDelete:            {top(kmsg.OffsetDelete), false, false},
		kmsg.ConsumerGroupDescribe:   {top(kmsg.ConsumerGroupDescribe), true, false},
		kmsg.StreamsGroupHeartbeat:   {1, true, false},
		kmsg.StreamsGroupDescribe:    {1, true, false},
	}
	// With the migration on, the classic group keys are routed too.
	wantMig := map[kmsg.Key]reg{
		kmsg.JoinGroup:  {7, false, false},
		kmsg.Heartbeat:  {3, false, false},
		kmsg.LeaveGroup: {4, false, false},
		kmsg.SyncGroup:  {5, false, false},
	}
	for k, r := range want {
		wantMig[k] = r
	}
	for _, tc := range []struct {
		name string
		mig  *Migration
		want map[kmsg.Key]reg
	}{{"migration off", nil, want}, {"migration on", &Migration{}, wantMig}} {
		rs := &Routes{o: Options{UpstreamMaxVersions: up}, mig: tc.mig}
		got := map[kmsg.Key]reg{}
		for _, rt := range rs.active() {
			if _, dup := got[rt.key]; dup {
				t.Fatalf("%s: key %d twice in the table", tc.name, rt.key)
			}
			if rt.serve == nil {
				t.Fatalf("%s: key %d has no handler", tc.name, rt.key)
			}
			got[rt.key] = reg{rt.max, rt.advertise, rt.capped}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Fatalf("%s: routes %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
	// TxnOffsetCommit: the upstream's range, at most v5; the offset keys
	// stay at v9 whatever the upstream speaks.
	rs := &Routes{}
	for _, rt := range rs.table() {
		switch rt.key {
		case kmsg.TxnOffsetCommit:
			if rt.max != txnOffsetsMaxVersion {
				t.Errorf("TxnOffsetCommit up to v%d on a current upstream, want v%d", rt.max, txnOffsetsMaxVersion)
			}
		case kmsg.OffsetCommit, kmsg.OffsetFetch:
			if rt.max != offsetsMaxVersion {
				t.Errorf("key %d up to v%d, want v%d", rt.key, rt.max, offsetsMaxVersion)
			}
		}
	}
}

// TestRegisterOnce: the routes are registered once; registering them again
// (or a second route set) is refused by the proxy, naming the key, instead
// of silently replacing the first handlers.
func TestRegisterOnce(t *testing.T) {
	p, err := proxy.New(proxy.Options{Upstream: []string{"x:1"}, Listen: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	rs := &Routes{mig: &Migration{}}
	if err := rs.Register(p); err != nil {
		t.Fatal(err)
	}
	err = (&Routes{}).Register(p)
	if err == nil || !strings.Contains(err.Error(), "already registered") || !strings.Contains(err.Error(), "OffsetCommit") {
		t.Fatalf("second registration: %v, want OffsetCommit already registered", err)
	}
}

// TestHandleTyped: a handler's key is its request type's, its body reaches
// it typed, and a body of another key (a proxy bug) goes upstream untouched
// instead of panicking the event loop.
func TestHandleTyped(t *testing.T) {
	var got *kmsg.DeleteGroupsRequest
	h := handle(func(_ *proxy.Request, r *kmsg.DeleteGroupsRequest, out proxy.Outcome) {
		got = r
		out.Respond(kmsg.NewPtrDeleteGroupsResponse())
	})
	if h.key != kmsg.DeleteGroups {
		t.Fatalf("key %d, want DeleteGroups (%d)", h.key, kmsg.DeleteGroups)
	}
	conn := proxytest.NewConn(nil)
	body := kmsg.NewPtrDeleteGroupsRequest()
	res, err := proxytest.Serve(h.serve, conn.Request(body)).Wait(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got != body || res.Kind != proxytest.Responded {
		t.Fatalf("typed body not served: got %p want %p, %v", got, body, res.Kind)
	}
	got = nil
	// A request whose body is of another key, as a proxy bug would make.
	req := conn.Request(kmsg.NewPtrDeleteGroupsRequest())
	req.Body = kmsg.NewPtrListGroupsRequest()
	if res, err = proxytest.Serve(h.serve, req).Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got != nil || res.Kind != proxytest.Forwarded {
		t.Fatalf("a ListGroups body reached the DeleteGroups handler: served %v, %v", got != nil, res.Kind)
	}
}
