package route

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/streamshift/streamshift/proxy/proxytest"
)

// withACLs: a cluster with SASL PLAIN and ACLs: "admin" is a superuser (the
// control plane), "alice" (the client through the proxy) may DESCRIBE topic
// "in" and topics prefixed "app-", and use any group; "secret" is a topic
// she may not DESCRIBE.
func withACLs(e *env) { withACLsAnd()(e) }

// withACLsAnd is withACLs with more ACLs for alice.
func withACLsAnd(more ...kfake.ACL) func(*env) {
	return func(e *env) {
		e.topics = []string{"in", "secret"}
		acls := append([]kfake.ACL{
			allow(kmsg.ACLResourceTypeTopic, "in", kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationDescribe),
			allow(kmsg.ACLResourceTypeTopic, "app-", kmsg.ACLResourcePatternTypePrefixed, kmsg.ACLOperationDescribe),
			allow(kmsg.ACLResourceTypeGroup, "*", kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationAll),
		}, more...)
		e.kopts = []kfake.Opt{kfake.EnableSASL(), kfake.EnableACLs(), kfake.Superuser("PLAIN", "admin", "admin"),
			kfake.User("PLAIN", "alice", "alice", acls...)}
		e.ctlOpts = []kgo.Opt{kgo.SASL(plain.Auth{User: "admin", Pass: "admin"}.AsMechanism())}
		e.proxyClientOpts = []kgo.Opt{kgo.SASL(plain.Auth{User: "alice", Pass: "alice"}.AsMechanism())}
	}
}

func allow(rt kmsg.ACLResourceType, name string, pattern kmsg.ACLResourcePatternType, op kmsg.ACLOperation) kfake.ACL {
	return kfake.ACL{Resource: rt, Name: name, Pattern: pattern, Operation: op, Allow: true}
}

// aclJoin is join with the given source topics and a changelog topic.
func aclJoin(group, member string, source ...string) *kmsg.StreamsGroupHeartbeatRequest {
	req := join(group, member)
	st := &req.Topology.Subtopologies[0]
	st.SourceTopics = source
	st.StateChangelogTopics = []kmsg.TopicInfo{{Topic: group + "-counts-changelog"}}
	return req
}

// aliceACL is withACLs' alice as the broker authorizes her: she may
// DESCRIBE topic "in" and topics prefixed "app-", do anything on groups,
// and nothing else, unless more allows it.
func aliceACL(more ...acl) acl {
	return func(rt kmsg.ACLResourceType, op kmsg.ACLOperation, name string) bool {
		for _, m := range more {
			if !m(rt, op, name) {
				return false
			}
		}
		switch rt {
		case kmsg.ACLResourceTypeGroup:
			return false
		case kmsg.ACLResourceTypeTopic:
			return op != kmsg.ACLOperationDescribe || (name != "in" && !strings.HasPrefix(name, "app-"))
		}
		return true
	}
}

// allowing is an acl refusing everything but op on rt.
func allowing(rt kmsg.ACLResourceType, op kmsg.ACLOperation) acl {
	return func(r kmsg.ACLResourceType, o kmsg.ACLOperation, _ string) bool { return r != rt || o != op }
}

// asked names the asks of c from the from-th on.
func asked(c *proxytest.Conn, from int) []string {
	var out []string
	for _, r := range c.Asks()[from:] {
		out = append(out, kmsg.NameForKey(r.Key()))
	}
	return out
}

// TestAuthorizeStreamsHeartbeatTopics: a streams join naming a topic the
// client's principal may not DESCRIBE gets TOPIC_AUTHORIZATION_FAILED
// without a message, as Kafka 4.4 answers, decided by the broker for the
// client's own principal on its own connection; a join with topics it may
// describe goes on. The answers are cached per connection: the same join
// again asks nothing, unless the cache is off.
func TestAuthorizeStreamsHeartbeatTopics(t *testing.T) {
	e := newEnv(t, direct, func(e *env) { e.topics, e.authCache = []string{"in", "secret"}, 1<<62 })
	alice := e.conn(aliceACL())
	resp := respond[*kmsg.StreamsGroupHeartbeatResponse](e, alice, aclJoin("app", "m-1", "secret"))
	if resp.ErrorCode != kerr.TopicAuthorizationFailed.Code || resp.ErrorMessage != nil {
		t.Fatalf("join naming a topic alice may not describe: code %d message %q, want TOPIC_AUTHORIZATION_FAILED, none", resp.ErrorCode, deref(resp.ErrorMessage))
	}
	resp = respond[*kmsg.StreamsGroupHeartbeatResponse](e, alice, aclJoin("app", "m-1", "in"))
	if resp.ErrorCode != 0 {
		t.Fatalf("join with allowed topics: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	n := len(alice.Asks())
	respond[*kmsg.StreamsGroupHeartbeatResponse](e, alice, aclJoin("app", "m-1", "in"))
	if got := asked(alice, n); len(got) != 0 {
		t.Errorf("the same join again asked %v, want nothing (cached)", got)
	}
	// Without the cache every join asks group READ and topics DESCRIBE,
	// and changelog CREATE once the coordinator asks for the changelog
	// again: it took the last refusal back on a goroutine
	// (authorize_topics.go), so that may be a join later.
	e.routes.auth.setTTL(0)
	for created := false; !created; {
		n = len(alice.Asks())
		respond[*kmsg.StreamsGroupHeartbeatResponse](e, alice, aclJoin("app", "m-1", "in"))
		got := asked(alice, n)
		created = slices.Equal(got, []string{"Heartbeat", "Metadata", "CreateTopics"})
		if !created && !slices.Equal(got, []string{"Heartbeat", "Metadata"}) {
			t.Fatalf("without the cache the join asked %v, want Heartbeat, Metadata and CreateTopics (group READ, topics DESCRIBE, changelog CREATE)", got)
		}
		if e.ctx.Err() != nil {
			t.Fatal("no join asked CREATE on the changelog")
		}
	}
}

// TestAuthorizeStreamsDescribeTopics: a group whose topology names a topic
// the describing principal may not DESCRIBE is answered
// TOPIC_AUTHORIZATION_FAILED with Kafka 4.4's message and no members; a
// group it may see is described.
func TestAuthorizeStreamsDescribeTopics(t *testing.T) {
	e := newEnv(t, direct, func(e *env) { e.topics = []string{"in", "secret"} })
	admin := e.conn(allowAll)
	for _, j := range []*kmsg.StreamsGroupHeartbeatRequest{aclJoin("hidden", "m-1", "secret"), aclJoin("app", "m-2", "in")} {
		if resp := respond[*kmsg.StreamsGroupHeartbeatResponse](e, admin, j); resp.ErrorCode != 0 {
			t.Fatalf("admin's join of %s: %v", j.Group, kerr.ErrorForCode(resp.ErrorCode))
		}
	}
	d := kmsg.NewPtrStreamsGroupDescribeRequest()
	d.Version, d.Groups = 1, []string{"hidden", "app"}
	resp := respond[*kmsg.StreamsGroupDescribeResponse](e, e.conn(aliceACL()), d)
	if len(resp.Groups) != 2 {
		t.Fatalf("%d groups described, want 2", len(resp.Groups))
	}
	hidden, app := resp.Groups[0], resp.Groups[1]
	want := "The described group uses topics that the client is not authorized to describe."
	if hidden.Group != "hidden" || hidden.ErrorCode != kerr.TopicAuthorizationFailed.Code || deref(hidden.ErrorMessage) != want || len(hidden.Members) != 0 || hidden.Topology != nil {
		t.Errorf("hidden group: %s code %d message %q, %d members, topology %v", hidden.Group, hidden.ErrorCode, deref(hidden.ErrorMessage), len(hidden.Members), hidden.Topology != nil)
	}
	if app.Group != "app" || app.ErrorCode != 0 || len(app.Members) != 1 {
		t.Errorf("app group: %s code %d, %d members", app.Group, app.ErrorCode, len(app.Members))
	}
}

// TestAuthorizeInternalTopicsCreate: alice may not CREATE the changelog
// topic her join needs: streamshift does not create it, and the
// MISSING_INTERNAL_TOPICS detail says so as Kafka 4.4's does; the
// superuser's join of the same group gets it created.
func TestAuthorizeInternalTopicsCreate(t *testing.T) {
	e := newEnv(t, withACLs)
	resp, err := aclJoin("app", "m-1", "in").RequestWith(e.ctx, e.broker)
	if err != nil {
		t.Fatal(err)
	}
	want := "Internal topics are missing: app-counts-changelog; Unauthorized to CREATE on topics app-counts-changelog."
	if resp.ErrorCode != 0 || len(resp.Status) != 1 || resp.Status[0].StatusCode != statusMissingInternalTopics || resp.Status[0].StatusDetail != want {
		t.Fatalf("alice's join: code %d, status %+v; want MISSING_INTERNAL_TOPICS %q", resp.ErrorCode, resp.Status, want)
	}
	topics, err := e.adm.ListTopics(e.ctx, "app-counts-changelog")
	if err != nil {
		t.Fatal(err)
	}
	if topics.Has("app-counts-changelog") {
		t.Fatal("the changelog topic alice may not create was created")
	}
	admin := e.client(kgo.SASL(plain.Auth{User: "admin", Pass: "admin"}.AsMechanism()))
	adminBroker := e.coordinatorOf("app", admin)
	waitFor(t, "the superuser's join to create the changelog", func() error {
		resp, err := aclJoin("app", "m-2", "in").RequestWith(e.ctx, adminBroker)
		if err != nil {
			return err
		}
		if len(resp.Status) > 0 && strings.Contains(resp.Status[0].StatusDetail, "Unauthorized") {
			return fmt.Errorf("superuser's join: %s", resp.Status[0].StatusDetail)
		}
		topics, err := e.adm.ListTopics(e.ctx, "app-counts-changelog")
		if err != nil {
			return err
		}
		if !topics.Has("app-counts-changelog") {
			return fmt.Errorf("not created yet")
		}
		return nil
	})
}

// waitFor retries fn until it succeeds or the test's context ends.
func waitFor(t *testing.T, what string, fn func() error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := fn()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAuthorizationCacheBounded: the cache never holds more than
// maxAuthorizationEntries, whatever a client asks about; expired entries go
// first.
func TestAuthorizationCacheBounded(t *testing.T) {
	a := newAuthorizer(time.Minute, nil)
	now := time.Unix(1000, 0)
	a.now = func() time.Time { return now }
	fill := func(from, n int, at time.Time) {
		for i := range n {
			a.entries[authKey{conn: 1, name: fmt.Sprint(from + i)}] = authEntry{at: at}
		}
	}
	fill(0, maxAuthorizationEntries/2, now.Add(-2*time.Minute)) // expired
	fill(maxAuthorizationEntries/2, maxAuthorizationEntries/2, now)
	a.evict(now)
	if n := len(a.entries); n != maxAuthorizationEntries/4 {
		t.Errorf("%d entries after evicting, want %d (the expired, then half the rest)", n, maxAuthorizationEntries/4)
	}
	for k, e := range a.entries {
		if now.Sub(e.at) >= a.ttl {
			t.Fatalf("expired entry %v kept", k)
		}
	}
}

// TestAuthorizationRefreshedAhead: a steady member's heartbeats never wait
// for the broker: an answer past half its life is asked again in the
// background, so it never expires while the member heartbeats; only an
// answer past its whole life is waited for.
func TestAuthorizationRefreshedAhead(t *testing.T) {
	e := newEnv(t, direct, func(e *env) { e.authCache = 10 * time.Second })
	a := e.routes.auth
	var mu sync.Mutex
	now := time.Now()
	a.mu.Lock()
	a.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	a.mu.Unlock()
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	counts := func() (uint64, uint64) { a.mu.Lock(); defer a.mu.Unlock(); return a.asked, a.refreshed }

	member := e.conn(allowAll)
	epoch := e.joinDirect(member, "app", "m-1")
	heartbeat := func() {
		t.Helper()
		hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		hb.Version, hb.Group, hb.MemberID, hb.MemberEpoch = 1, "app", "m-1", epoch
		resp := respond[*kmsg.StreamsGroupHeartbeatResponse](e, member, hb)
		if resp.ErrorCode != 0 {
			t.Fatalf("heartbeat: %v", kerr.ErrorForCode(resp.ErrorCode))
		}
		epoch = resp.MemberEpoch
	}
	// refreshed waits until the group READ answer was taken at the
	// clock's current time (the background answer was stored).
	refreshed := func() {
		t.Helper()
		a.mu.Lock()
		at := a.now()
		a.mu.Unlock()
		eventually(t, e.ctx, "the background answer", func() bool {
			a.mu.Lock()
			defer a.mu.Unlock()
			for k, en := range a.entries {
				if k.resource == kmsg.ACLResourceTypeGroup && k.op == kmsg.ACLOperationRead && en.at.Equal(at) && !en.refreshing {
					return true
				}
			}
			return false
		})
	}
	asked, bg := counts()
	for i := range 3 {
		advance(6 * time.Second) // past half of 10s, within it
		heartbeat()
		refreshed()
		if a2, b2 := counts(); a2 != asked || b2 != bg+uint64(i+1) {
			t.Fatalf("heartbeat %d: %d probes waited for, %d in the background; want %d, %d", i, a2-asked, b2-bg, 0, i+1)
		}
	}
	advance(11 * time.Second) // past the whole life
	heartbeat()
	if a2, _ := counts(); a2 != asked+1 {
		t.Errorf("an expired answer: %d probes waited for, want 1", a2-asked)
	}
}

// eventually yields until cond holds, for what other goroutines of the
// process finish without waiting on anything outside it; ctx bounds it.
func eventually(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if ctx.Err() != nil {
			t.Fatalf("%s: %v", what, ctx.Err())
		}
		runtime.Gosched()
	}
}
