package route

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

// The broker decides what a client may do with what streamshift serves
// itself, for the client's own principal, which streamshift never sees
// (SASL passes through on the client's own upstream connection). So a
// handler asks the broker on that connection (proxy.Request.Ask) with a
// probe that has no side effect and whose first check in Kafka's
// KafkaApis is the one wanted:
//
//   - READ on a GROUP: a Heartbeat of an unknown member: Kafka checks READ
//     before anything else and answers GROUP_AUTHORIZATION_FAILED, else
//     some other error (UNKNOWN_MEMBER_ID, NOT_COORDINATOR, ...);
//   - DESCRIBE on a GROUP: DescribeGroups, GROUP_AUTHORIZATION_FAILED per
//     group, checked before the broker looks whether it coordinates it;
//   - DESCRIBE on a TOPIC: Metadata without auto-creation,
//     TOPIC_AUTHORIZATION_FAILED per topic;
//   - DELETE on a GROUP: an OffsetDelete of no partition (nothing to
//     delete once DELETE is checked);
//   - CREATE on a TOPIC: CreateTopics with validate_only,
//     TOPIC_AUTHORIZATION_FAILED per topic (CREATE on the cluster implies
//     it, as in Kafka);
//   - DESCRIBE_CONFIGS and ALTER_CONFIGS on the CLUSTER, for served groups'
//     configs (authorize_configs.go): a DescribeConfigs, or a validate-only
//     IncrementalAlterConfigs, of the broker defaults naming no config.
//
// Answers are cached per connection, resource and operation for
// Options.AuthorizationCache, so a steady member's heartbeats ask nothing.
// Any answer other than the authorization error counts as allowed: on a
// cluster without an authorizer every probe is allowed.

// maxAuthorizationEntries bounds the cache: entries are small, and a full
// cache drops its expired entries, then half of the rest.
const maxAuthorizationEntries = 1 << 16

// errAuthorizationUnknown wraps a probe that got no answer: the client gets
// a retriable error.
var errAuthorizationUnknown = errors.New("streamshift could not ask the broker for this client's authorization")

type authKey struct {
	conn     uint64
	resource kmsg.ACLResourceType
	op       kmsg.ACLOperation
	name     string
}

type authEntry struct {
	allowed bool
	at      time.Time
	// refreshing: asked again in the background already (refresh).
	refreshing bool
}

// authorizer asks and caches.
type authorizer struct {
	versions func(key int16) int16 // highest version the upstream takes

	mu      sync.Mutex
	ttl     time.Duration
	now     func() time.Time // read with mu held
	entries map[authKey]authEntry
	// asked counts the probes a request waited for, refreshed those sent
	// in the background (tests, the benchmark).
	asked, refreshed uint64
}

func newAuthorizer(ttl time.Duration, versions func(int16) int16) *authorizer {
	return &authorizer{ttl: ttl, versions: versions, now: time.Now, entries: map[authKey]authEntry{}}
}

// denied returns the names of resources of type rt the client of req may
// not do op on (nil: all allowed), asking the broker for those not cached.
func (a *authorizer) denied(req *proxy.Request, rt kmsg.ACLResourceType, op kmsg.ACLOperation, names []string) ([]string, error) {
	if a == nil {
		return nil, nil // no checks (the benchmark's baseline)
	}
	var out, miss, stale []string
	a.mu.Lock()
	now := a.now()
	for _, n := range dedupe(names) {
		k := authKey{req.Client.ConnID, rt, op, n}
		e, ok := a.entries[k]
		age := now.Sub(e.at)
		switch {
		case ok && age < a.ttl:
			if !e.allowed {
				out = append(out, n)
			}
			// Past half its life an answer is asked again in the
			// background, so a steady member never waits for one.
			if age >= a.ttl/2 && !e.refreshing {
				e.refreshing = true
				a.entries[k] = e
				stale = append(stale, n)
			}
		default:
			miss = append(miss, n)
		}
	}
	a.mu.Unlock()
	if len(stale) > 0 {
		a.refresh(req, rt, op, stale)
	}
	if len(miss) == 0 {
		return out, nil
	}
	ctx, cancel := requestContext(req, 10*time.Second)
	defer cancel()
	deniedNow, err := a.probe(req, rt, op, miss).wait(ctx) // sends as it goes
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errAuthorizationUnknown, err)
	}
	a.mu.Lock()
	a.asked++
	a.store(req.Client.ConnID, rt, op, miss, deniedNow, now)
	a.mu.Unlock()
	for _, n := range miss {
		if deniedNow[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

// refresh asks again about names, whose answers are past half their life:
// the probes are queued on the connection now (while the client's request
// holds it, so before anything the client sends next), their answers
// replace the cached ones when they come.
func (a *authorizer) refresh(req *proxy.Request, rt kmsg.ACLResourceType, op kmsg.ACLOperation, names []string) {
	p := a.probe(req, rt, op, names)
	if len(p.asks) > probeChunk {
		// More than can be queued now: the answers expire and are asked
		// when next needed.
		a.unmarkRefreshing(req.Client.ConnID, rt, op, names)
		return
	}
	p.start()
	a.mu.Lock()
	a.refreshed++
	a.mu.Unlock()
	go func() {
		ctx, cancel := requestContext(req, 10*time.Second)
		defer cancel()
		deniedNow, err := p.wait(ctx)
		a.mu.Lock()
		defer a.mu.Unlock()
		now := a.now()
		if err != nil {
			// The old answers expire as they would have.
			a.unmarkRefreshingLocked(req.Client.ConnID, rt, op, names)
			return
		}
		a.store(req.Client.ConnID, rt, op, names, deniedNow, now)
	}()
}

func (a *authorizer) unmarkRefreshing(conn uint64, rt kmsg.ACLResourceType, op kmsg.ACLOperation, names []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.unmarkRefreshingLocked(conn, rt, op, names)
}

func (a *authorizer) unmarkRefreshingLocked(conn uint64, rt kmsg.ACLResourceType, op kmsg.ACLOperation, names []string) {
	for _, n := range names {
		k := authKey{conn, rt, op, n}
		if e, ok := a.entries[k]; ok {
			e.refreshing = false
			a.entries[k] = e
		}
	}
}

// store caches answers; mu is held.
func (a *authorizer) store(conn uint64, rt kmsg.ACLResourceType, op kmsg.ACLOperation, names []string, denied map[string]bool, now time.Time) {
	if len(a.entries)+len(names) > maxAuthorizationEntries {
		a.evict(now)
	}
	for _, n := range names {
		k := authKey{conn, rt, op, n}
		if _, ok := a.entries[k]; ok || len(a.entries) < maxAuthorizationEntries {
			a.entries[k] = authEntry{allowed: !denied[n], at: now}
		}
	}
}

// allowed is denied for one resource.
func (a *authorizer) allowed(req *proxy.Request, rt kmsg.ACLResourceType, op kmsg.ACLOperation, name string) (bool, error) {
	d, err := a.denied(req, rt, op, []string{name})
	return len(d) == 0, err
}

// evict runs with mu held.
func (a *authorizer) evict(now time.Time) {
	for k, e := range a.entries {
		if now.Sub(e.at) >= a.ttl {
			delete(a.entries, k)
		}
	}
	n := len(a.entries) / 2
	for k := range a.entries {
		if len(a.entries) <= n {
			break
		}
		delete(a.entries, k)
	}
}

func dedupe(names []string) []string {
	seen := make(map[string]bool, len(names))
	out := names[:0:0]
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// probes is the number of probes sent so far.
func (a *authorizer) probes() uint64 {
	if a == nil {
		return 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.asked
}

// setTTL changes the cache's lifetime (tests).
func (a *authorizer) setTTL(d time.Duration) {
	a.mu.Lock()
	a.ttl = d
	a.mu.Unlock()
}
