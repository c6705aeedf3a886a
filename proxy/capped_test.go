package proxy

import (
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestApiVersionsCappedRegistrations(t *testing.T) {
	t.Parallel()
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{
		{ApiKey: 8, MinVersion: 2, MaxVersion: 10},  // OffsetCommit, capped at 9, advertised
		{ApiKey: 9, MinVersion: 1, MaxVersion: 10},  // OffsetFetch, advertised but not capped
		{ApiKey: 28, MinVersion: 0, MaxVersion: 6},  // TxnOffsetCommit, capped at 5, not advertised
		{ApiKey: 68, MinVersion: 3, MaxVersion: 10}, // nothing left under a cap of 2
	}
	regs := []*registration{
		{key: 8, minVersion: 0, maxVersion: 9, advertise: true, capped: true},
		{key: 9, minVersion: 0, maxVersion: 9, advertise: true},
		{key: 28, minVersion: 0, maxVersion: 5, capped: true},
		{key: 68, minVersion: 0, maxVersion: 2, capped: true},
		{key: 89, minVersion: 0, maxVersion: 1, capped: true}, // upstream lacks it, not advertised
	}
	capApiVersions(resp, regs, nil)
	want := []kmsg.ApiVersionsResponseApiKey{
		{ApiKey: 8, MinVersion: 0, MaxVersion: 9},
		{ApiKey: 9, MinVersion: 0, MaxVersion: 10},
		{ApiKey: 28, MinVersion: 0, MaxVersion: 5},
	}
	if len(resp.ApiKeys) != len(want) {
		t.Fatalf("got %+v", resp.ApiKeys)
	}
	for i := range want {
		g := resp.ApiKeys[i]
		if g.ApiKey != want[i].ApiKey || g.MinVersion != want[i].MinVersion || g.MaxVersion != want[i].MaxVersion {
			t.Errorf("key %d: got %+v want %+v", i, g, want[i])
		}
	}
}

// TestCappedVersionRefused: a request above a capped registration (a client
// ignoring ApiVersions) must not bypass the interceptor upstream.
func TestCappedVersionRefused(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	tp := startProxy(t, c.ListenAddrs(), nil)
	var mu sync.Mutex
	var seen []int16
	if err := tp.RegisterCapped(int16(kmsg.OffsetCommit), 0, 9, true, InterceptorFunc(func(req *Request, out Outcome) {
		mu.Lock()
		seen = append(seen, req.Version)
		mu.Unlock()
		out.Forward()
	})); err != nil {
		t.Fatal(err)
	}
	rc := dialRaw(t, tp.addr)
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Group = "g"
	commit.Version = 9
	rc.send(1, commit)
	if frame := rc.recv(); frameCorr(frame) != 1 {
		t.Fatalf("v9: correlation %d", frameCorr(frame))
	}
	commit.Version = 10
	rc.send(2, commit)
	rc.expectClosed()
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != 9 {
		t.Fatalf("intercepted versions %v, want [9]", seen)
	}
}
