package route

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy/proxytest"
)

// batchFixture is an authorizer with a clock of the test's in front of a
// broker that authorizes READ and DESCRIBE per group (readDenied), and
// coordinates every group but those in elsewhere, as Kafka 4.4 answers the
// READ probes: Heartbeat (READ checked first) and DescribeGroups v3 to v5
// with the authorized operations of the groups it describes.
type batchFixture struct {
	a   *authorizer
	mu  sync.Mutex
	now time.Time
	// readDenied and elsewhere are read by the broker; set before asking.
	readDenied, elsewhere map[string]bool
	conn                  *proxytest.Conn
}

func newBatchFixture(t *testing.T, ttl time.Duration, describeGroupsMax int16) *batchFixture {
	f := &batchFixture{now: time.Unix(1000, 0), readDenied: map[string]bool{}, elsewhere: map[string]bool{}}
	f.a = newAuthorizer(ttl, func(key int16) int16 {
		if key == int16(kmsg.DescribeGroups) {
			return describeGroupsMax
		}
		return kmsg.RequestForKey(key).MaxVersion()
	})
	f.a.now = func() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.now }
	f.conn = proxytest.NewConn(func(req kmsg.Request) (kmsg.Response, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		switch r := req.(type) {
		case *kmsg.HeartbeatRequest:
			resp := r.ResponseKind().(*kmsg.HeartbeatResponse)
			resp.ErrorCode = kerr.UnknownMemberID.Code
			if f.readDenied[r.Group] {
				resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
			}
			return resp, nil
		case *kmsg.DescribeGroupsRequest:
			if r.Version > describeGroupsMax {
				t.Errorf("DescribeGroups v%d asked of a broker taking v%d at most", r.Version, describeGroupsMax)
			}
			resp := r.ResponseKind().(*kmsg.DescribeGroupsResponse)
			for _, g := range r.Groups {
				dg := kmsg.NewDescribeGroupsResponseGroup()
				dg.Group, dg.State = g, "Dead"
				if f.elsewhere[g] {
					dg.ErrorCode = kerr.NotCoordinator.Code
				} else if r.IncludeAuthorizedOperations {
					// DESCRIBE stays allowed: READ is what is revoked.
					dg.AuthorizedOperations = 1<<int32(kmsg.ACLOperationDescribe) | 1<<int32(kmsg.ACLOperationDelete)
					if !f.readDenied[g] {
						dg.AuthorizedOperations |= 1 << int32(kmsg.ACLOperationRead)
					}
				}
				resp.Groups = append(resp.Groups, dg)
			}
			return resp, nil
		}
		return nil, kerr.UnsupportedVersion
	})
	f.conn.Client.Principal, f.conn.Client.Node = "User:alice", 1
	return f
}

func (f *batchFixture) advance(d time.Duration) { f.mu.Lock(); f.now = f.now.Add(d); f.mu.Unlock() }

// set changes what the broker answers.
func (f *batchFixture) set(fn func()) { f.mu.Lock(); fn(); f.mu.Unlock() }

// mayRead asks whether alice may READ group, then waits for the refresh it
// started, if any, to land.
func (f *batchFixture) mayRead(t *testing.T, group string) bool {
	t.Helper()
	ok, err := f.a.allowed(f.conn.Request(kmsg.NewPtrStreamsGroupHeartbeatRequest()), kmsg.ACLResourceTypeGroup, kmsg.ACLOperationRead, group)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, t.Context(), "the background refresh", func() bool {
		f.a.mu.Lock()
		defer f.a.mu.Unlock()
		for _, e := range f.a.entries {
			if e.refreshing {
				return false
			}
		}
		return true
	})
	return ok
}

// askedSince describes the asks of the connection from the from-th on:
// the request's name and the groups it names.
func (f *batchFixture) askedSince(from int) []string {
	var out []string
	for _, r := range f.conn.Asks()[from:] {
		switch r := r.(type) {
		case *kmsg.HeartbeatRequest:
			out = append(out, "Heartbeat "+r.Group)
		case *kmsg.DescribeGroupsRequest:
			gs := slices.Sorted(slices.Values(r.Groups))
			out = append(out, "DescribeGroups "+strings.Join(gs, ","))
		default:
			out = append(out, kmsg.NameForKey(r.Key()))
		}
	}
	return out
}

// TestAuthorizationRefreshBatched: the refresh of one group's READ answer
// takes along the other groups of the principal on the same broker: one
// DescribeGroups (with the authorized operations) answers both, and the
// other group's next request asks nothing; a group no longer used is not
// taken along.
func TestAuthorizationRefreshBatched(t *testing.T) {
	f := newBatchFixture(t, 10*time.Second, 5)
	if !f.mayRead(t, "a") || !f.mayRead(t, "b") {
		t.Fatal("denied, want allowed")
	}
	n := len(f.conn.Asks())
	f.advance(6 * time.Second) // past half the TTL of both
	if !f.mayRead(t, "a") || !f.mayRead(t, "b") {
		t.Fatal("denied after the refresh, want allowed")
	}
	want := []string{"DescribeGroups a,b"}
	if got := f.askedSince(n); !slices.Equal(got, want) {
		t.Errorf("two groups of User:alice past half their TTL: asked %q, want %q (one request for both)", got, want)
	}
	if c := f.a.counts(); c.Allowed != 3 {
		t.Errorf("probes counted %+v, want 3 allowed (2 Heartbeats, 1 DescribeGroups)", c)
	}
	// A group no request needed for a TTL is not kept in the cache by the
	// refreshes of the others.
	n = len(f.conn.Asks())
	for range 2 {
		f.advance(6 * time.Second)
		f.mayRead(t, "a")
	}
	want = []string{"DescribeGroups a,b", "DescribeGroups a"}
	if got := f.askedSince(n); !slices.Equal(got, want) {
		t.Errorf("b unused for longer than the TTL: asked %q, want %q", got, want)
	}
}

// TestAuthorizationBatchedRefreshSeesRevocation: READ on a group revoked
// on the broker (DESCRIBE still allowed) reaches the group's served
// requests within the TTL through the refresh another group's request
// started: the next heartbeat of the group is refused with Kafka's
// GROUP_AUTHORIZATION_FAILED, without a message.
func TestAuthorizationBatchedRefreshSeesRevocation(t *testing.T) {
	var revoked atomic.Bool
	e := newEnv(t, direct, func(e *env) { e.authCache = 10 * time.Second })
	a := e.routes.auth
	var mu sync.Mutex
	now := time.Now()
	a.mu.Lock()
	a.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	a.mu.Unlock()
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	member := e.conn(func(rt kmsg.ACLResourceType, op kmsg.ACLOperation, name string) bool {
		return rt == kmsg.ACLResourceTypeGroup && op == kmsg.ACLOperationRead && name == "b" && revoked.Load()
	})
	member.Client.Principal, member.Client.Node = "User:alice", 0
	epochs := map[string]int32{"a": e.joinDirect(member, "a", "m-a"), "b": e.joinDirect(member, "b", "m-b")}
	heartbeat := func(group string) int16 {
		t.Helper()
		hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		hb.Version, hb.Group, hb.MemberID, hb.MemberEpoch = 1, group, "m-"+group, epochs[group]
		resp := respond[*kmsg.StreamsGroupHeartbeatResponse](e, member, hb)
		if resp.ErrorCode == 0 {
			epochs[group] = resp.MemberEpoch
		} else if resp.ErrorMessage != nil {
			t.Errorf("heartbeat of %s refused with message %q, want none (as Kafka)", group, *resp.ErrorMessage)
		}
		eventually(t, e.ctx, "the background refresh", func() bool {
			a.mu.Lock()
			defer a.mu.Unlock()
			for _, en := range a.entries {
				if en.refreshing {
					return false
				}
			}
			return true
		})
		return resp.ErrorCode
	}
	advance(time.Second)
	revoked.Store(true) // READ on b only
	advance(5 * time.Second)
	if code := heartbeat("a"); code != 0 {
		t.Fatalf("heartbeat of a: %v", kerr.ErrorForCode(code))
	}
	advance(time.Second) // 6 s after the revocation, within the TTL
	if code := heartbeat("b"); code != kerr.GroupAuthorizationFailed.Code {
		t.Errorf("heartbeat of b after READ on b was revoked and a's answer refreshed: %v, want GROUP_AUTHORIZATION_FAILED", kerr.ErrorForCode(code))
	}
	if code := heartbeat("a"); code != 0 {
		t.Errorf("heartbeat of a: %v, want allowed", kerr.ErrorForCode(code))
	}
}

// TestAuthorizationRefreshWithoutDescribeGroupsV3: an upstream without
// DescribeGroups v3 (no authorized operations) gets a Heartbeat probe per
// group, as before.
func TestAuthorizationRefreshWithoutDescribeGroupsV3(t *testing.T) {
	f := newBatchFixture(t, 10*time.Second, 2)
	f.mayRead(t, "a")
	f.mayRead(t, "b")
	n := len(f.conn.Asks())
	f.advance(6 * time.Second)
	f.set(func() { f.readDenied["b"] = true })
	if !f.mayRead(t, "a") || !f.mayRead(t, "b") {
		t.Fatal("denied within the TTL of an allowed answer, want the cached answer")
	}
	want := []string{"Heartbeat a", "Heartbeat b"}
	if got := f.askedSince(n); !slices.Equal(got, want) {
		t.Errorf("upstream with DescribeGroups v2 at most: asked %q, want %q", got, want)
	}
	f.advance(time.Second)
	if f.mayRead(t, "b") {
		t.Error("b allowed after its refresh saw READ revoked, want denied")
	}
}

// TestAuthorizationRefreshOfGroupCoordinatedElsewhere: a group the
// connection's broker does not coordinate gets no operations from
// DescribeGroups (NOT_COORDINATOR): its request's refresh asks it with a
// Heartbeat then, and with the Heartbeat alone after; other groups are
// still refreshed together.
func TestAuthorizationRefreshOfGroupCoordinatedElsewhere(t *testing.T) {
	f := newBatchFixture(t, 10*time.Second, 5)
	f.set(func() { f.elsewhere["c"] = true })
	f.mayRead(t, "a")
	f.mayRead(t, "c")
	n := len(f.conn.Asks())
	f.advance(6 * time.Second)
	f.set(func() { f.readDenied["c"] = true })
	f.mayRead(t, "c")
	want := []string{"DescribeGroups a,c", "Heartbeat c"}
	if got := f.askedSince(n); !slices.Equal(got, want) {
		t.Fatalf("refresh of c, coordinated elsewhere: asked %q, want %q", got, want)
	}
	if f.mayRead(t, "c") {
		t.Error("c allowed after its Heartbeat saw READ revoked, want denied")
	}
	n = len(f.conn.Asks())
	f.advance(6 * time.Second)
	f.mayRead(t, "c")
	f.mayRead(t, "a")
	want = []string{"Heartbeat c", "DescribeGroups a"}
	if got := f.askedSince(n); !slices.Equal(got, want) {
		t.Errorf("next refreshes: asked %q, want %q (c alone)", got, want)
	}
}
