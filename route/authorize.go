package route

import (
	"context"
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
//     some other error (UNKNOWN_MEMBER_ID, NOT_COORDINATOR, ...); refreshed
//     with a principal's other groups on the same broker in one
//     DescribeGroups with the authorized operations (authorize_batch.go);
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
// Answers are cached per principal, resource and operation for
// Options.AuthorizationCache when the proxy knows the principal the broker
// sees on the client's connection (proxy.ClientInfo.Principal: a SASL
// PLAIN or SCRAM user, or the one principal of every connection without
// SASL), so a thousand members of one principal cost the broker what one
// does; otherwise per connection. One probe about a key in flight serves
// every request that needs it meanwhile (a flight). Any answer other than
// the authorization error counts as allowed: on a cluster without an
// authorizer every probe is allowed.

// maxAuthorizationEntries bounds the cache: entries are small, and a full
// cache drops its expired entries, then half of the rest.
const maxAuthorizationEntries = 1 << 16

// errAuthorizationUnknown wraps a probe that got no answer: the client gets
// a retriable error.
var errAuthorizationUnknown = errors.New("streamshift could not ask the broker for this client's authorization")

// authKey is what an answer holds for: a principal, or a connection (conn)
// whose principal is unknown, and a resource and operation.
type authKey struct {
	conn      uint64
	principal string
	resource  kmsg.ACLResourceType
	op        kmsg.ACLOperation
	name      string
}

// keyOf is the key of req's client for rt, op and name.
func (a *authorizer) keyOf(req *proxy.Request, rt kmsg.ACLResourceType, op kmsg.ACLOperation, name string) authKey {
	if p := req.Client.Principal; p != "" && a.shared {
		return authKey{principal: p, resource: rt, op: op, name: name}
	}
	return authKey{conn: req.Client.ConnID, resource: rt, op: op, name: name}
}

type authEntry struct {
	allowed bool
	at      time.Time
	// refreshing: asked again in the background already (refresh).
	refreshing bool
	// used is when a request last read the answer, node the upstream node
	// of the connection that got it (proxy.ClientInfo.Node): a batched
	// refresh (authorize_batch.go) takes along the answers of the same
	// node still in use.
	used time.Time
	node int32
	// single: a batched refresh could not answer it (another node
	// coordinates the group): it is asked again on its own.
	single bool
}

// flight is a probe waited for; requests needing one of its keys wait for
// it instead of asking again.
type flight struct {
	done chan struct{}
	// joined counts the requests waiting for it (tests).
	joined int
	denied map[string]bool // set before done closes
	err    error
}

// ProbeCounts are the authorization probes sent upstream (requests: a
// READ probe of n groups is n Heartbeats, their batched refresh one
// DescribeGroups), by result: every name allowed, some denied, no answer.
type ProbeCounts struct {
	Allowed, Denied, Failed uint64
}

// authorizer asks and caches.
type authorizer struct {
	versions func(key int16) int16 // highest version the upstream takes
	// shared: answers are cached per principal where it is known
	// (Options.AuthorizationPerConnection unset).
	shared bool

	mu      sync.Mutex
	ttl     time.Duration
	now     func() time.Time // read with mu held
	entries map[authKey]authEntry
	// reads indexes the group READ answers of entries by whose they are,
	// for a batched refresh (authorize_batch.go).
	reads   map[authOwner]map[string]struct{}
	flights map[authKey]*flight
	// asked counts the probes a request waited for, refreshed those sent
	// in the background (tests, the benchmark); sent the requests upstream.
	asked, refreshed uint64
	sent             ProbeCounts
}

func newAuthorizer(ttl time.Duration, versions func(int16) int16) *authorizer {
	return &authorizer{ttl: ttl, versions: versions, now: time.Now, shared: true,
		entries: map[authKey]authEntry{}, reads: map[authOwner]map[string]struct{}{}, flights: map[authKey]*flight{}}
}

// denied returns the names of resources of type rt the client of req may
// not do op on (nil: all allowed), asking the broker for those not cached.
func (a *authorizer) denied(req *proxy.Request, rt kmsg.ACLResourceType, op kmsg.ACLOperation, names []string) ([]string, error) {
	if a == nil {
		return nil, nil // no checks (the benchmark's baseline)
	}
	var out, miss, stale []string
	var waits map[*flight][]string // made at the first wait
	var mine *flight               // made at the first miss
	a.mu.Lock()
	now := a.now()
	for _, n := range dedupe(names) {
		k := a.keyOf(req, rt, op, n)
		e, ok := a.entries[k]
		age := now.Sub(e.at)
		switch {
		case ok && age < a.ttl:
			if !e.allowed {
				out = append(out, n)
			}
			e.used = now
			// Past half its life an answer is asked again in the
			// background, so a steady member never waits for one.
			if age >= a.ttl/2 && !e.refreshing {
				e.refreshing = true
				stale = append(stale, n)
			}
			a.entries[k] = e
		case a.flights[k] != nil:
			f := a.flights[k]
			if waits == nil {
				waits = map[*flight][]string{}
			}
			if len(waits[f]) == 0 {
				f.joined++
			}
			waits[f] = append(waits[f], n)
		default:
			miss = append(miss, n)
			if mine == nil {
				mine = &flight{done: make(chan struct{})}
			}
			if a.ttl > 0 {
				a.flights[k] = mine
			}
		}
	}
	a.mu.Unlock()
	if len(stale) > 0 {
		a.refresh(req, rt, op, stale)
	}
	if len(miss) == 0 && len(waits) == 0 {
		return out, nil
	}
	ctx, cancel := requestContext(req, 10*time.Second)
	defer cancel()
	if len(miss) > 0 {
		deniedNow, err := a.ask(ctx, req, rt, op, miss, mine, now)
		if err != nil {
			return nil, err
		}
		for _, n := range miss {
			if deniedNow[n] {
				out = append(out, n)
			}
		}
	}
	for f, ns := range waits {
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %w", errAuthorizationUnknown, ctx.Err())
		}
		deniedThen := f.denied
		if f.err != nil {
			// The probe went on another connection, which went away
			// or got no answer: this one asks for itself.
			var err error
			if deniedThen, err = a.ask(ctx, req, rt, op, ns, nil, a.clock()); err != nil {
				return nil, err
			}
		}
		for _, n := range ns {
			if deniedThen[n] {
				out = append(out, n)
			}
		}
	}
	return out, nil
}

func (a *authorizer) clock() time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.now()
}

// ask probes names and caches the answers taken at now; f, if not nil, is
// the flight of their keys, landed here.
func (a *authorizer) ask(ctx context.Context, req *proxy.Request, rt kmsg.ACLResourceType, op kmsg.ACLOperation, names []string, f *flight, now time.Time) (map[string]bool, error) {
	p := a.probe(req, rt, op, names)
	deniedNow, err := p.wait(ctx) // sends as it goes
	a.mu.Lock()
	a.asked++
	a.count(len(p.asks), deniedNow, err)
	if err == nil {
		a.store(req, rt, op, names, deniedNow, now)
	}
	if f != nil {
		for _, n := range names {
			if k := a.keyOf(req, rt, op, n); a.flights[k] == f {
				delete(a.flights, k)
			}
		}
		f.denied, f.err = deniedNow, err
		close(f.done)
	}
	a.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errAuthorizationUnknown, err)
	}
	return deniedNow, nil
}

// count adds a probe of n requests upstream to sent; mu is held.
func (a *authorizer) count(n int, denied map[string]bool, err error) {
	if err != nil {
		a.sent.Failed += uint64(n)
		return
	}
	for _, d := range denied {
		if d {
			a.sent.Denied += uint64(n)
			return
		}
	}
	a.sent.Allowed += uint64(n)
}

// refresh asks again about names, whose answers are past half their life:
// the probes are queued on the connection now (while the client's request
// holds it, so before anything the client sends next), their answers
// replace the cached ones when they come.
func (a *authorizer) refresh(req *proxy.Request, rt kmsg.ACLResourceType, op kmsg.ACLOperation, names []string) {
	if a.refreshBatched(req, rt, op, names) {
		return
	}
	p := a.probe(req, rt, op, names)
	if len(p.asks) > probeChunk {
		// More than can be queued now: the answers expire and are asked
		// when next needed.
		a.unmarkRefreshing(req, rt, op, names)
		return
	}
	p.start()
	a.mu.Lock()
	a.refreshed++
	a.mu.Unlock()
	go func() {
		// Past the request: for a hopped one the owner has answered it
		// already (connContext).
		ctx, cancel := connContext(req, 10*time.Second)
		defer cancel()
		deniedNow, err := p.wait(ctx)
		a.mu.Lock()
		defer a.mu.Unlock()
		a.count(len(p.asks), deniedNow, err)
		now := a.now()
		if err != nil {
			// The old answers expire as they would have.
			a.unmarkRefreshingLocked(req, rt, op, names)
			return
		}
		a.store(req, rt, op, names, deniedNow, now)
	}()
}

func (a *authorizer) unmarkRefreshing(req *proxy.Request, rt kmsg.ACLResourceType, op kmsg.ACLOperation, names []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.unmarkRefreshingLocked(req, rt, op, names)
}

func (a *authorizer) unmarkRefreshingLocked(req *proxy.Request, rt kmsg.ACLResourceType, op kmsg.ACLOperation, names []string) {
	for _, n := range names {
		k := a.keyOf(req, rt, op, n)
		if e, ok := a.entries[k]; ok {
			e.refreshing = false
			if !ok {
				a.index(k)
			}
			a.entries[k] = e
		}
	}
}

// store caches answers got on req's connection; mu is held. An answer
// replacing a live one keeps when that was last used and whether it is
// asked on its own (single); one replacing none or an expired one is being
// used now.
func (a *authorizer) store(req *proxy.Request, rt kmsg.ACLResourceType, op kmsg.ACLOperation, names []string, denied map[string]bool, now time.Time) {
	if len(a.entries)+len(names) > maxAuthorizationEntries {
		a.evict(now)
	}
	for _, n := range names {
		k := a.keyOf(req, rt, op, n)
		old, ok := a.entries[k]
		if ok || len(a.entries) < maxAuthorizationEntries {
			e := authEntry{allowed: !denied[n], at: now, used: now, node: req.Client.Node}
			if ok && now.Sub(old.at) < a.ttl {
				e.used, e.single = old.used, old.single
			}
			if !ok {
				a.index(k)
			}
			a.entries[k] = e
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
			a.drop(k)
		}
	}
	n := len(a.entries) / 2
	for k := range a.entries {
		if len(a.entries) <= n {
			break
		}
		a.drop(k)
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

// counts are the probes sent upstream so far.
func (a *authorizer) counts() ProbeCounts {
	if a == nil {
		return ProbeCounts{}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sent
}

// AuthorizationProbes are the authorization probes sent upstream so far,
// by result (streamshift_authorization_probes_total).
func (rs *Routes) AuthorizationProbes() ProbeCounts { return rs.auth.counts() }

// setTTL changes the cache's lifetime (tests).
func (a *authorizer) setTTL(d time.Duration) {
	a.mu.Lock()
	a.ttl = d
	a.mu.Unlock()
}

// The group requests streamshift serves for a group of its own go through
// the broker's ACLs here first. Where the request can also go upstream
// untouched (the classic group keys, the commits, the offset fetches), a
// request the client's principal may not make is simply forwarded: the
// broker refuses it with Kafka's own answer (GROUP_AUTHORIZATION_FAILED,
// or TRANSACTIONAL_ID_AUTHORIZATION_FAILED first for a TxnOffsetCommit),
// and a refused request changes nothing upstream.

// groupReadDenied reports whether the client of req may not READ group,
// the check Kafka makes first for JoinGroup, SyncGroup, Heartbeat,
// LeaveGroup, OffsetCommit and TxnOffsetCommit (after the transactional
// id).
func (rs *Routes) groupReadDenied(req *proxy.Request, group string) (bool, error) {
	ok, err := rs.auth.allowed(req, kmsg.ACLResourceTypeGroup, kmsg.ACLOperationRead, group)
	return !ok && err == nil, err
}

// groupDescribeDenied is groupReadDenied for DESCRIBE, OffsetFetch's and
// DescribeGroups' check.
func (rs *Routes) groupDescribeDenied(req *proxy.Request, group string) (bool, error) {
	ok, err := rs.auth.allowed(req, kmsg.ACLResourceTypeGroup, kmsg.ACLOperationDescribe, group)
	return !ok && err == nil, err
}

// groupsDenied returns the set of groups the client of req may not do op on
// (nil when all are allowed). When the broker could not be asked, all
// count as denied: the requests this serves then go to the broker, which
// decides itself.
func (rs *Routes) groupsDenied(req *proxy.Request, op kmsg.ACLOperation, groups []string) map[string]bool {
	if len(groups) == 0 {
		return nil
	}
	denied, err := rs.auth.denied(req, kmsg.ACLResourceTypeGroup, op, groups)
	if err != nil {
		rs.o.Log.Debug().Err(err).Msg("group authorization not asked; the broker decides")
		denied = groups
	}
	if len(denied) == 0 {
		return nil
	}
	out := make(map[string]bool, len(denied))
	for _, g := range denied {
		out[g] = true
	}
	return out
}
