package route

import (
	"context"
	"encoding/binary"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/proxy/peer"
	"github.com/streamshift/streamshift/proxy/proxytest"
)

// splitCluster is a cluster map by group ("self": this instance, "":
// nobody); a peer in down fails every call, the others answer each
// DescribeGroups entry with their own name as its protocol type, in
// reverse order (answers merge by group id).
type splitCluster struct {
	fakeCluster
	owner map[string]string
	down  map[string]bool
	mu    sync.Mutex
	asked map[string][]string
}

func (f *splitCluster) Owner(g string) (bool, string, int32, bool) {
	o := f.owner[g]
	return o == "self", o, 1, o != ""
}

func (f *splitCluster) Forward(_ context.Context, owner, _ string, _ int32, req *proxy.Request, _ time.Duration) ([]byte, error) {
	if f.down[owner] {
		return nil, &peer.Error{Peer: owner, Code: kerr.RequestTimedOut.Code, Reason: "timed out"}
	}
	r := req.Body.(*kmsg.DescribeGroupsRequest)
	f.mu.Lock()
	f.asked[owner] = append(f.asked[owner], r.Groups...)
	f.mu.Unlock()
	resp := kmsg.NewPtrDescribeGroupsResponse()
	resp.SetVersion(req.Version)
	for i := len(r.Groups) - 1; i >= 0; i-- {
		g := kmsg.NewDescribeGroupsResponseGroup()
		g.Group, g.ProtocolType = r.Groups[i], owner
		resp.Groups = append(resp.Groups, g)
	}
	frame := binary.BigEndian.AppendUint32(nil, uint32(req.CorrelationID))
	return resp.AppendTo(frame), nil
}

// A DescribeGroups of groups of every kind of owner: the entries owned
// here reach the local handler as a request of their own, each peer gets
// one sub-request of its entries, an entry nobody owns and the entries of
// a peer that does not answer get COORDINATOR_NOT_AVAILABLE, and the
// answers come back in request order. In a mixed release nothing splits.
func TestClusterSplitByOwner(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fc := &splitCluster{fakeCluster: fakeCluster{hops: true},
		owner: map[string]string{"g1": "self", "g2": "b", "g4": "c", "g5": "b", "g6": "self"},
		down:  map[string]bool{"c": true}, asked: map[string][]string{}}
	var local []string
	rs := &Routes{o: Options{Cluster: fc}}
	h := rs.clusterSplit(route{keyFacts: keys[kmsg.DescribeGroups]}, handler{serve: func(req *proxy.Request, out proxy.Outcome) {
		r := req.Body.(*kmsg.DescribeGroupsRequest)
		local = append(local, r.Groups...)
		resp := kmsg.NewPtrDescribeGroupsResponse()
		for _, id := range r.Groups {
			g := kmsg.NewDescribeGroupsResponseGroup()
			g.Group, g.ProtocolType = id, "here"
			resp.Groups = append(resp.Groups, g)
		}
		out.Respond(resp)
	}}).serve
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Version = 4
	req.Groups = []string{"g1", "g2", "g3", "g4", "g5", "g6"}
	res, err := proxytest.Serve(h, proxytest.NewConn(nil).Request(req)).Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	resp, ok := res.Response.(*kmsg.DescribeGroupsResponse)
	if !ok {
		t.Fatalf("answer %+v", res)
	}
	type entry struct {
		group, by string
		code      int16
	}
	var got []entry
	for _, g := range resp.Groups {
		got = append(got, entry{g.Group, g.ProtocolType, g.ErrorCode})
	}
	unavailable := kerr.CoordinatorNotAvailable.Code
	want := []entry{{"g1", "here", 0}, {"g2", "b", 0}, {"g3", "", unavailable}, {"g4", "", unavailable}, {"g5", "b", 0}, {"g6", "here", 0}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("answer %+v, want %+v", got, want)
	}
	if !reflect.DeepEqual(local, []string{"g1", "g6"}) || !reflect.DeepEqual(fc.asked, map[string][]string{"b": {"g2", "g5"}}) {
		t.Fatalf("handled here %v, asked of peers %v", local, fc.asked)
	}

	fc.hops, local = false, nil
	res, err = proxytest.Serve(h, proxytest.NewConn(nil).Request(req)).Wait(ctx)
	if err != nil || len(local) != len(req.Groups) {
		t.Fatalf("mixed release: handled here %v (%+v %v), want every group", local, res, err)
	}
}
