package proxy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A request above its key's body limit is answered by the limit's answer,
// undecoded (the interceptor never sees it), and the connection goes on: a
// StreamsGroupHeartbeat of 30,000 subtopologies cost the proxy about 45 MiB
// to decode before the coordinator refused it.
func TestLimitBodyAnswersUndecoded(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	p := startProxy(t, c.ListenAddrs(), nil)
	var fake fakeHeartbeat
	if err := p.Register(int16(kmsg.StreamsGroupHeartbeat), 0, 1, true, &fake); err != nil {
		t.Fatal(err)
	}
	const limit = 64 << 10
	err := p.LimitBody(int16(kmsg.StreamsGroupHeartbeat), limit, func(_ int16, size int) kmsg.Response {
		resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
		resp.ErrorCode = kerr.UnknownServerError.Code
		msg := "too large"
		resp.ErrorMessage = &msg
		return resp
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.LimitBody(int16(kmsg.JoinGroup), limit, nil); err == nil {
		t.Error("LimitBody of an unregistered key accepted")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl := newClient(t, p, &addrWatch{})
	if err := cl.Ping(ctx); err != nil {
		t.Fatal(err)
	}

	big := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	big.Group = "app"
	big.MemberID = strings.Repeat("m", 2*limit)
	resp, err := big.RequestWith(ctx, cl.Broker(1))
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != kerr.UnknownServerError.Code || resp.ErrorMessage == nil || *resp.ErrorMessage != "too large" {
		t.Errorf("oversized heartbeat answered %d %v, want UNKNOWN_SERVER_ERROR \"too large\"", resp.ErrorCode, resp.ErrorMessage)
	}
	small := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	small.Group = "app"
	small.MemberID = "m-1"
	small.MemberEpoch = 3
	resp, err = small.RequestWith(ctx, cl.Broker(1))
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 0 || resp.MemberEpoch != 4 {
		t.Errorf("heartbeat after the oversized one answered %+v", resp)
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.reqs) != 1 || fake.reqs[0].Body.(*kmsg.StreamsGroupHeartbeatRequest).MemberID != "m-1" {
		t.Errorf("the interceptor saw %d requests, want only the small one", len(fake.reqs))
	}
}
