package proxy

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// TestClusterVersionsCapApiVersions: an instance advertises an intercepted
// key at most at the highest version every instance of the cluster serves,
// so no client sends a version an owner of an earlier release cannot
// decode (docs/one-address.md §4, "Mixed releases").
func TestClusterVersionsCapApiVersions(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	tp := startProxy(t, c.ListenAddrs(), nil)
	shg := int16(kmsg.StreamsGroupHeartbeat)
	if err := tp.Register(shg, 0, 1, true, InterceptorFunc(func(req *Request, out Outcome) {
		resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
		resp.Version = req.Version
		out.Respond(resp)
	})); err != nil {
		t.Fatal(err)
	}
	if got := tp.ServedVersions()[shg]; got != 1 {
		t.Fatalf("served StreamsGroupHeartbeat up to v%d, want v1", got)
	}
	advertised := func(rc *rawConn) int16 {
		t.Helper()
		rc.send(1, apiVersionsReq(3))
		r, err := kafkaframe.DecodeResponse(int16(kmsg.ApiVersions), 3, rc.recv()[4:])
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range r.(*kmsg.ApiVersionsResponse).ApiKeys {
			if k.ApiKey == shg {
				return k.MaxVersion
			}
		}
		return -1
	}
	if v := advertised(dialRaw(t, tp.addr)); v != 1 {
		t.Fatalf("alone: StreamsGroupHeartbeat advertised up to v%d, want v1", v)
	}
	// Another instance of the cluster serves it up to v0 only.
	tp.SetClusterVersions(map[int16]int16{shg: 0, int16(kmsg.OffsetCommit): 9})
	if v := advertised(dialRaw(t, tp.addr)); v != 0 {
		t.Fatalf("in a cluster serving v0: StreamsGroupHeartbeat advertised up to v%d, want v0", v)
	}
}
