package proxytest

import (
	"context"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

// describeThenAnswer asks the broker to describe the request's group and
// answers the heartbeat with the group's state as its error message.
func describeThenAnswer(req *proxy.Request, out proxy.Outcome) {
	hb := req.Body.(*kmsg.StreamsGroupHeartbeatRequest)
	d := kmsg.NewPtrDescribeGroupsRequest()
	d.Groups = []string{hb.Group}
	r, err := req.Ask(context.Background(), d, 5)
	resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	if err != nil {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		msg := err.Error()
		resp.ErrorMessage = &msg
		out.Respond(resp)
		return
	}
	state := r.(*kmsg.DescribeGroupsResponse).Groups[0].State
	resp.ErrorMessage = &state
	out.Respond(resp)
}

func heartbeat(group string) kmsg.Request {
	hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	hb.Version, hb.Group = 1, group
	return hb
}

// TestAskAnsweredByTheTest: the handler's ask reaches the test's broker as
// the broker decodes it, and the handler's answer is recorded as the
// client decodes it.
func TestAskAnsweredByTheTest(t *testing.T) {
	c := NewConn(func(req kmsg.Request) (kmsg.Response, error) {
		d := req.(*kmsg.DescribeGroupsRequest)
		resp := kmsg.NewPtrDescribeGroupsResponse()
		g := kmsg.NewDescribeGroupsResponseGroup()
		g.Group, g.State = d.Groups[0], "Stable"
		resp.Groups = append(resp.Groups, g)
		return resp, nil
	})
	res, err := Serve(describeThenAnswer, c.Request(heartbeat("app"))).Wait(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != Responded || res.Extra != 0 {
		t.Fatalf("outcome %v (%d extra), want responded once", res.Kind, res.Extra)
	}
	got := res.Response.(*kmsg.StreamsGroupHeartbeatResponse)
	if got.ErrorMessage == nil || *got.ErrorMessage != "Stable" || got.Version != 1 {
		t.Fatalf("answer %+v", got)
	}
	asks := c.Asks()
	if len(asks) != 1 || asks[0].GetVersion() != 5 || asks[0].(*kmsg.DescribeGroupsRequest).Groups[0] != "app" {
		t.Fatalf("asks %+v", asks)
	}
}

// TestAskOfClosedConn: an ask of a closed connection fails with
// proxy.ErrAskClosed, as on a real one.
func TestAskOfClosedConn(t *testing.T) {
	c := NewConn(func(kmsg.Request) (kmsg.Response, error) { return nil, errors.New("must not be asked") })
	c.Close()
	req := c.Request(heartbeat("app"))
	_, err := req.Ask(t.Context(), kmsg.NewPtrDescribeGroupsRequest(), 5)
	if !errors.Is(err, proxy.ErrAskClosed) {
		t.Fatalf("ask: %v, want ErrAskClosed", err)
	}
	select {
	case <-req.Done():
	default:
		t.Fatal("Done not closed")
	}
}

// TestOutcomeChecked: outcomes the proxy cannot send close the connection,
// a second outcome is counted, a panic closes.
func TestOutcomeChecked(t *testing.T) {
	c := NewConn(nil)
	for _, tc := range []struct {
		name  string
		serve proxy.InterceptorFunc
		want  Kind
		extra int
	}{
		{"wrong response key", func(_ *proxy.Request, out proxy.Outcome) { out.Respond(kmsg.NewPtrHeartbeatResponse()) }, Closed, 0},
		{"rewritten at an unknown version", func(req *proxy.Request, out proxy.Outcome) { out.ForwardRewritten(req.Body, 99, nil) }, Closed, 0},
		{"twice", func(_ *proxy.Request, out proxy.Outcome) { out.Forward(); out.Forward() }, Forwarded, 1},
		{"panic", func(*proxy.Request, proxy.Outcome) { panic("boom") }, Closed, 0},
	} {
		res, err := Serve(tc.serve, c.Request(heartbeat("app"))).Wait(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if res.Kind != tc.want || res.Extra != tc.extra {
			t.Errorf("%s: %v with %d extra, want %v with %d", tc.name, res.Kind, res.Extra, tc.want, tc.extra)
		}
	}
}

// TestRewrittenAnswer: a rewritten forward's answer passes OnResponse and
// reaches the client at its own version.
func TestRewrittenAnswer(t *testing.T) {
	c := NewConn(nil)
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Version, commit.Group = 9, "app"
	res, err := Serve(func(req *proxy.Request, out proxy.Outcome) {
		fwd := *req.Body.(*kmsg.OffsetCommitRequest)
		fwd.MemberID = "anchor"
		out.ForwardRewritten(&fwd, 7, func(r kmsg.Response) kmsg.Response {
			r.(*kmsg.OffsetCommitResponse).ThrottleMillis = 42
			return r
		})
	}, c.Request(commit)).Wait(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != Rewritten || res.Version != 7 || res.Request.(*kmsg.OffsetCommitRequest).MemberID != "anchor" {
		t.Fatalf("outcome %+v", res)
	}
	got, err := res.Answer(kmsg.NewPtrOffsetCommitResponse())
	if err != nil {
		t.Fatal(err)
	}
	if got.GetVersion() != 9 || got.(*kmsg.OffsetCommitResponse).ThrottleMillis != 42 {
		t.Fatalf("answer %+v", got)
	}
}
