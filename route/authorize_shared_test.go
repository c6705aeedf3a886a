package route

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/streamshift/streamshift/proxy/proxytest"
)

// sharedFixture is an authorizer with a clock of the test's and a broker
// whose group READ decision the test changes (revoked), counting the READ
// probes it answers.
type sharedFixture struct {
	a       *authorizer
	mu      sync.Mutex
	now     time.Time
	revoked atomic.Bool
	probes  atomic.Int64
	// gate, if set, holds every probe until it is closed.
	gate chan struct{}
	// entered gets a value when a probe reaches the broker.
	entered chan struct{}
}

func newSharedFixture(ttl time.Duration) *sharedFixture {
	f := &sharedFixture{now: time.Unix(1000, 0), entered: make(chan struct{}, 64)}
	f.a = newAuthorizer(ttl, func(key int16) int16 { return kmsg.RequestForKey(key).MaxVersion() })
	f.a.now = func() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.now }
	return f
}

func (f *sharedFixture) advance(d time.Duration) { f.mu.Lock(); f.now = f.now.Add(d); f.mu.Unlock() }

// conn is a connection the proxy knows to be of principal ("": unknown).
func (f *sharedFixture) conn(principal string) *proxytest.Conn {
	c := proxytest.NewConn(func(req kmsg.Request) (kmsg.Response, error) {
		hb, ok := req.(*kmsg.HeartbeatRequest)
		if !ok {
			return nil, kerr.UnknownServerError
		}
		f.probes.Add(1)
		f.entered <- struct{}{}
		if f.gate != nil {
			<-f.gate
		}
		resp := hb.ResponseKind().(*kmsg.HeartbeatResponse)
		resp.ErrorCode = kerr.UnknownMemberID.Code
		if f.revoked.Load() {
			resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		}
		return resp, nil
	})
	c.Client.Principal = principal
	return c
}

// mayRead asks whether c's principal may READ group "app".
func (f *sharedFixture) mayRead(t *testing.T, c *proxytest.Conn) bool {
	t.Helper()
	ok, err := f.a.allowed(c.Request(kmsg.NewPtrStreamsGroupHeartbeatRequest()), kmsg.ACLResourceTypeGroup, kmsg.ACLOperationRead, "app")
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestAuthorizationSharedByPrincipal: the broker's answer on one
// connection serves every connection the proxy knows to be of the same
// principal: a thousand members of one app cost the broker one probe per
// group and TTL, not one per member.
func TestAuthorizationSharedByPrincipal(t *testing.T) {
	f := newSharedFixture(10 * time.Second)
	a1, a2 := f.conn("User:alice"), f.conn("User:alice")
	if !f.mayRead(t, a1) || !f.mayRead(t, a2) {
		t.Fatal("denied, want allowed")
	}
	if n := f.probes.Load(); n != 1 {
		t.Errorf("two connections of User:alice: %d probes, want 1", n)
	}
	if c := f.a.counts(); c != (ProbeCounts{Allowed: 1}) {
		t.Errorf("probes counted %+v, want 1 allowed", c)
	}
}

// TestAuthorizationSharedRevocation: an ACL revoked after another
// connection of the principal was answered reaches the principal's
// requests within the TTL, and meanwhile they ask nothing.
func TestAuthorizationSharedRevocation(t *testing.T) {
	ttl := 10 * time.Second
	f := newSharedFixture(ttl)
	a1, a2 := f.conn("User:alice"), f.conn("User:alice")
	if !f.mayRead(t, a1) {
		t.Fatal("denied before the revocation")
	}
	f.revoked.Store(true)
	f.advance(ttl / 4)
	if !f.mayRead(t, a2) || f.probes.Load() != 1 {
		t.Fatalf("within the first half of the TTL: %d probes, want the cached answer and 1 probe", f.probes.Load())
	}
	f.advance(ttl) // past the whole life of the answer
	if f.mayRead(t, a2) {
		t.Error("allowed past the TTL of an answer taken before the revocation, want denied")
	}
	if c := f.a.counts(); c.Denied != 1 {
		t.Errorf("probes counted %+v, want 1 denied", c)
	}
}

// TestAuthorizationProbesCollapsed: requests of one principal arriving
// while a probe of theirs is in flight wait for its answer instead of
// each asking the broker.
func TestAuthorizationProbesCollapsed(t *testing.T) {
	f := newSharedFixture(10 * time.Second)
	f.gate = make(chan struct{})
	const n = 5
	var wg sync.WaitGroup
	results := make([]bool, n)
	ask := func(i int) {
		defer wg.Done()
		ok, err := f.a.allowed(f.conn("User:alice").Request(kmsg.NewPtrStreamsGroupHeartbeatRequest()), kmsg.ACLResourceTypeGroup, kmsg.ACLOperationRead, "app")
		results[i] = ok && err == nil
	}
	wg.Add(1)
	go ask(0)
	<-f.entered // the first probe is at the broker, unanswered
	for i := 1; i < n; i++ {
		wg.Add(1)
		go ask(i)
	}
	// Bounds the wait when the requests do not wait for the probe (and
	// so wait at the broker's gate instead).
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	eventually(t, ctx, "the other requests to wait for the first probe", func() bool {
		f.a.mu.Lock()
		defer f.a.mu.Unlock()
		for _, fl := range f.a.flights {
			return fl.joined == n-1
		}
		return false
	})
	close(f.gate)
	wg.Wait()
	for i, ok := range results {
		if !ok {
			t.Errorf("request %d: denied or failed, want allowed", i)
		}
	}
	if got := f.probes.Load(); got != 1 {
		t.Errorf("%d concurrent requests of one principal: %d probes, want 1", n, got)
	}
}

// TestAuthorizationPrincipalsApart: answers for one principal never serve
// another, and a connection whose principal the proxy does not know (a
// SASL mechanism it cannot read, a client of another instance) keeps its
// own answers, as before principals were known.
func TestAuthorizationPrincipalsApart(t *testing.T) {
	f := newSharedFixture(10 * time.Second)
	alice, bob := f.conn("User:alice"), f.conn("User:bob")
	f.mayRead(t, alice)
	f.mayRead(t, bob)
	if n := f.probes.Load(); n != 2 {
		t.Errorf("User:alice then User:bob: %d probes, want 2", n)
	}
	u1, u2 := f.conn(""), f.conn("")
	for _, c := range []*proxytest.Conn{u1, u1, u2, u2} {
		f.mayRead(t, c)
	}
	if n := f.probes.Load(); n != 4 {
		t.Errorf("two connections of unknown principal, twice each: %d probes, want 2 more (one per connection)", n-2)
	}
	f.a.shared = false // authorization.per-connection
	f.mayRead(t, f.conn("User:alice"))
	if n := f.probes.Load(); n != 5 {
		t.Errorf("per-connection caching: a new connection of User:alice asked %d, want 1", n-4)
	}
}

// TestAuthorizationSharedThroughProxy: end to end, two connections of
// SASL PLAIN alice through the proxy: the second's join of the group asks
// the broker nothing the first one's join asked already (group READ,
// topics DESCRIBE, changelog CREATE), since the proxy read the principal
// from the SASL exchange it passed through.
func TestAuthorizationSharedThroughProxy(t *testing.T) {
	e := newEnv(t, withACLs, func(e *env) { e.authCache = 1 << 62 })
	resp, err := aclJoin("app", "m-1", "in").RequestWith(e.ctx, e.broker)
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("first connection's join: %v %+v", err, resp)
	}
	before := e.routes.AuthorizationProbes()
	if before.Allowed == 0 {
		t.Fatalf("the first join asked nothing (%+v): are the checks on?", before)
	}
	other, err := kgo.NewClient(kgo.SeedBrokers(e.addr), kgo.ClientID("streams-app"),
		kgo.SASL(plain.Auth{User: "alice", Pass: "alice"}.AsMechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	resp, err = aclJoin("app", "m-2", "in").RequestWith(e.ctx, e.coordinatorOf("app", other))
	if err != nil || resp.ErrorCode != 0 {
		t.Fatalf("second connection's join: %v %+v", err, resp)
	}
	if after := e.routes.AuthorizationProbes(); after != before {
		t.Errorf("a second connection of alice asked %d more probes (%+v, then %+v), want none", (after.Allowed+after.Denied)-(before.Allowed+before.Denied), before, after)
	}
}
