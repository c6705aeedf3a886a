package route

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
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
//     it, as in Kafka).
//
// Answers are cached per connection, resource and operation for
// Options.AuthorizationCache, so a steady member's heartbeats ask nothing.
// Any answer other than the authorization error counts as allowed: on a
// cluster without an authorizer every probe is allowed.

// maxAuthorizationEntries bounds the cache: entries are small, and a full
// cache drops its expired entries, then half of the rest.
const maxAuthorizationEntries = 1 << 16

// probeMemberID is the member id of the READ probe: no member has it, so
// the broker's coordinator changes nothing.
const probeMemberID = "streamshift-authorization-probe"

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
}

// authorizer asks and caches.
type authorizer struct {
	ttl      time.Duration
	versions func(key int16) int16 // highest version the upstream takes
	now      func() time.Time

	mu      sync.Mutex
	entries map[authKey]authEntry
	asked   uint64 // probes sent, for tests and the benchmark
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
	var out, miss []string
	now := a.now()
	a.mu.Lock()
	for _, n := range dedupe(names) {
		e, ok := a.entries[authKey{req.Client.ConnID, rt, op, n}]
		switch {
		case ok && now.Sub(e.at) < a.ttl:
			if !e.allowed {
				out = append(out, n)
			}
		default:
			miss = append(miss, n)
		}
	}
	a.mu.Unlock()
	if len(miss) == 0 {
		return out, nil
	}
	ctx, cancel := requestContext(req, 10*time.Second)
	defer cancel()
	deniedNow, err := a.probe(ctx, req, rt, op, miss)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errAuthorizationUnknown, err)
	}
	a.mu.Lock()
	a.asked++
	if len(a.entries)+len(miss) > maxAuthorizationEntries {
		a.evict(now)
	}
	for _, n := range miss {
		if len(a.entries) < maxAuthorizationEntries {
			a.entries[authKey{req.Client.ConnID, rt, op, n}] = authEntry{allowed: !deniedNow[n], at: now}
		}
		if deniedNow[n] {
			out = append(out, n)
		}
	}
	a.mu.Unlock()
	return out, nil
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

// probe asks the broker about names, which are not cached.
func (a *authorizer) probe(ctx context.Context, req *proxy.Request, rt kmsg.ACLResourceType, op kmsg.ACLOperation, names []string) (map[string]bool, error) {
	denied := map[string]bool{}
	switch {
	case rt == kmsg.ACLResourceTypeGroup && op == kmsg.ACLOperationRead:
		for _, g := range names {
			hb := kmsg.NewPtrHeartbeatRequest()
			hb.Group, hb.Generation, hb.MemberID = g, -1, probeMemberID
			resp, err := req.Ask(ctx, hb, min(a.versions(int16(kmsg.Heartbeat)), 4))
			if err != nil {
				return nil, err
			}
			denied[g] = resp.(*kmsg.HeartbeatResponse).ErrorCode == kerr.GroupAuthorizationFailed.Code
		}
	case rt == kmsg.ACLResourceTypeGroup && op == kmsg.ACLOperationDescribe:
		dg := kmsg.NewPtrDescribeGroupsRequest()
		dg.Groups = names
		resp, err := req.Ask(ctx, dg, min(a.versions(int16(kmsg.DescribeGroups)), 5))
		if err != nil {
			return nil, err
		}
		for _, g := range resp.(*kmsg.DescribeGroupsResponse).Groups {
			denied[g.Group] = g.ErrorCode == kerr.GroupAuthorizationFailed.Code
		}
	case rt == kmsg.ACLResourceTypeGroup && op == kmsg.ACLOperationDelete:
		// An OffsetDelete of no partition: Kafka checks DELETE on the
		// group first, and there is nothing to delete after.
		for _, g := range names {
			od := kmsg.NewPtrOffsetDeleteRequest()
			od.Group = g
			od.Topics = []kmsg.OffsetDeleteRequestTopic{}
			resp, err := req.Ask(ctx, od, min(a.versions(int16(kmsg.OffsetDelete)), 0))
			if err != nil {
				return nil, err
			}
			denied[g] = resp.(*kmsg.OffsetDeleteResponse).ErrorCode == kerr.GroupAuthorizationFailed.Code
		}
	case rt == kmsg.ACLResourceTypeTopic && op == kmsg.ACLOperationDescribe:
		md := kmsg.NewPtrMetadataRequest()
		for _, t := range names {
			mt := kmsg.NewMetadataRequestTopic()
			mt.Topic = kmsg.StringPtr(t)
			md.Topics = append(md.Topics, mt)
		}
		md.AllowAutoTopicCreation = false
		resp, err := req.Ask(ctx, md, max(min(a.versions(int16(kmsg.Metadata)), 12), 4))
		if err != nil {
			return nil, err
		}
		for _, t := range resp.(*kmsg.MetadataResponse).Topics {
			if t.Topic != nil {
				denied[*t.Topic] = t.ErrorCode == kerr.TopicAuthorizationFailed.Code
			}
		}
	case rt == kmsg.ACLResourceTypeTopic && op == kmsg.ACLOperationCreate:
		ct := kmsg.NewPtrCreateTopicsRequest()
		ct.ValidateOnly = true
		ct.TimeoutMillis = 10000
		for _, t := range names {
			rt := kmsg.NewCreateTopicsRequestTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor = t, -1, -1
			ct.Topics = append(ct.Topics, rt)
		}
		resp, err := req.Ask(ctx, ct, max(min(a.versions(int16(kmsg.CreateTopics)), 7), 4))
		if err != nil {
			return nil, err
		}
		for _, t := range resp.(*kmsg.CreateTopicsResponse).Topics {
			denied[t.Topic] = t.ErrorCode == kerr.TopicAuthorizationFailed.Code
		}
	default:
		return nil, fmt.Errorf("no probe for %s on %s", op, rt)
	}
	return denied, nil
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
