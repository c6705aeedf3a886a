package proxy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// askingHeartbeat answers StreamsGroupHeartbeat after asking the broker, on
// the client's own connection, for the metadata of the topics named in the
// group id (comma-separated): the answer's error message lists each
// topic's error code.
type askingHeartbeat struct{}

func (askingHeartbeat) Intercept(req *Request, out Outcome) {
	hb := req.Body.(*kmsg.StreamsGroupHeartbeatRequest)
	md := kmsg.NewPtrMetadataRequest()
	for _, t := range strings.Split(hb.Group, ",") {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(t)
		md.Topics = append(md.Topics, mt)
	}
	resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	resp.MemberEpoch = req.CorrelationID
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	mr, err := req.Ask(ctx, md, 9)
	var msg string
	if err != nil {
		msg = "error: " + err.Error()
	} else {
		var codes []string
		for _, t := range mr.(*kmsg.MetadataResponse).Topics {
			codes = append(codes, fmt.Sprintf("%s=%d", *t.Topic, t.ErrorCode))
		}
		msg = strings.Join(codes, ",")
	}
	resp.ErrorMessage = &msg
	out.Respond(resp)
}

// TestAskForTheClientsPrincipal: an interceptor's request of its own goes
// on the client's own upstream connection, so the broker (kfake with SASL
// and ACLs) answers it for the client's principal: alice may DESCRIBE
// "open", not "secret"; the superuser may both.
func TestAskForTheClientsPrincipal(t *testing.T) {
	t.Parallel()
	c := newCluster(t, kfake.SeedTopics(1, "open", "secret"), kfake.EnableSASL(), kfake.EnableACLs(),
		kfake.Superuser("PLAIN", "admin", "admin"),
		kfake.User("PLAIN", "alice", "alice", kfake.ACL{Resource: kmsg.ACLResourceTypeTopic, Name: "open",
			Pattern: kmsg.ACLResourcePatternTypeLiteral, Operation: kmsg.ACLOperationDescribe, Allow: true}))
	p := startProxy(t, c.ListenAddrs(), func(o *Options) {
		o.ControlPlane = []kgo.Opt{kgo.SASL(plain.Auth{User: "admin", Pass: "admin"}.AsMechanism())}
	})
	if err := p.Register(int16(kmsg.StreamsGroupHeartbeat), 0, 1, true, askingHeartbeat{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for user, want := range map[string]string{
		"alice": fmt.Sprintf("open=0,secret=%d", kerr.TopicAuthorizationFailed.Code),
		"admin": "open=0,secret=0",
	} {
		var w addrWatch
		cl := newClient(t, p, &w, kgo.SASL(plain.Auth{User: user, Pass: user}.AsMechanism()))
		if err := cl.Ping(ctx); err != nil {
			t.Fatal(err)
		}
		hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		hb.Group = "open,secret"
		resp, err := hb.RequestWith(ctx, cl.Broker(0))
		if err != nil {
			t.Fatal(err)
		}
		if got := deref(resp.ErrorMessage); got != want {
			t.Errorf("%s: the broker answered the ask with %q, want %q", user, got, want)
		}
	}
}

// TestAskPipelined: asks go upstream behind the client's requests already
// forwarded and their answers never reach the client: pipelined Metadata,
// ApiVersions and asking heartbeats come back in request order, each with
// its own answer.
func TestAskPipelined(t *testing.T) {
	t.Parallel()
	checkPipelined(t, askingHeartbeat{}, func(corr int32, hbr *kmsg.StreamsGroupHeartbeatResponse) {
		if hbr.MemberEpoch != corr || deref(hbr.ErrorMessage) != "p=0" {
			t.Fatalf("heartbeat %d: epoch %d, ask answered %q", corr, hbr.MemberEpoch, deref(hbr.ErrorMessage))
		}
	})
}

// heldAsks asks n times at once from the interceptor; the broker holds the
// Metadata answers until release is closed.
type heldAsks struct {
	n    int
	errs chan error
}

func (h heldAsks) Intercept(req *Request, out Outcome) {
	var wg sync.WaitGroup
	for range h.n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			md := kmsg.NewPtrMetadataRequest()
			_, err := req.Ask(context.Background(), md, 9)
			h.errs <- err
		}()
	}
	wg.Wait()
	close(h.errs)
	out.Respond(kmsg.NewPtrStreamsGroupHeartbeatResponse())
}

// TestAskBounded: a connection has at most maxAsksInFlight asks awaiting
// their answer; more are refused at once, the others answered.
func TestAskBounded(t *testing.T) {
	t.Parallel()
	c := newCluster(t, kfake.SeedTopics(1, "p"))
	p := startProxy(t, c.ListenAddrs(), nil)
	h := heldAsks{n: maxAsksInFlight + 1, errs: make(chan error, maxAsksInFlight+1)}
	if err := p.Register(int16(kmsg.StreamsGroupHeartbeat), 0, 1, true, h); err != nil {
		t.Fatal(err)
	}
	rc := dialRaw(t, p.NodeAddr(0))
	release := make(chan struct{})
	held := 0
	var mu sync.Mutex
	c.ControlKey(int16(kmsg.Metadata), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		held++
		first := held == 1
		mu.Unlock()
		if first {
			<-release // the first ask's answer waits: every ask is in flight meanwhile
		}
		return nil, nil, false
	})
	hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	hb.Version = 1
	rc.send(1, hb)
	refused, answered := 0, 0
	var once sync.Once
	for err := range h.errs {
		switch {
		case errors.Is(err, errTooManyAsks):
			refused++
			once.Do(func() { close(release) })
		case err == nil:
			answered++
		default:
			t.Errorf("ask: %v", err)
		}
	}
	if refused != 1 || answered != maxAsksInFlight {
		t.Errorf("%d asks refused, %d answered; want 1 and %d", refused, answered, maxAsksInFlight)
	}
	if frame := rc.recv(); frameCorr(frame) != 1 {
		t.Errorf("heartbeat answer has correlation id %d", frameCorr(frame))
	}
}

// closingAsk asks once the client connection has closed.
type closingAsk struct {
	started  chan struct{}
	err      chan error
	closedAt chan time.Time
}

func (a closingAsk) Intercept(req *Request, out Outcome) {
	close(a.started)
	<-req.ConnClosed()
	a.closedAt <- req.ConnClosedAt()()
	_, err := req.Ask(context.Background(), kmsg.NewPtrMetadataRequest(), 9)
	a.err <- err
	out.Respond(kmsg.NewPtrStreamsGroupHeartbeatResponse())
}

// TestAskAfterClose: an ask of a connection that closed is answered with
// ErrAskClosed, not left waiting; the request's connection has its close
// time (the disconnect expiry counts from it).
func TestAskAfterClose(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	p := startProxy(t, c.ListenAddrs(), nil)
	a := closingAsk{started: make(chan struct{}), err: make(chan error, 1), closedAt: make(chan time.Time, 1)}
	if err := p.Register(int16(kmsg.StreamsGroupHeartbeat), 0, 1, true, a); err != nil {
		t.Fatal(err)
	}
	rc := dialRaw(t, p.NodeAddr(0))
	hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	hb.Version = 1
	rc.send(1, hb)
	<-a.started
	before := time.Now()
	rc.Close()
	if at := <-a.closedAt; at.Before(before) || at.After(time.Now()) {
		t.Errorf("the closed connection's close time %v, want between the close (%v) and now", at, before)
	}
	if err := <-a.err; !errors.Is(err, ErrAskClosed) {
		t.Errorf("ask after close: %v, want ErrAskClosed", err)
	}
}

// deref is a response's nullable error message, "" for none.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
