// Package route is the one routing table of the requests streamshift
// intercepts: routes.go says which keys are served, at which versions, and
// whether they are advertised; NN_name.go is the only handler of wire key
// NN, but for the four classic group keys (11-14), which classic.go routes
// alike to the translator's NN_name.go files. A row (row.go) carries its
// key's facts, written once per key in keys.go: the groups its requests
// name, the one group the cluster's gate routes it by, its split by owner,
// its refusal and how long its handler may keep the client muted. A handler
// checks ownership (is the group the proxy's?), passes the migration gate
// when the migration is on, then serves the request locally (the
// coordinator), translates it (a classic member of a streams group) or
// forwards it upstream, rewritten where the upstream must not see what the
// client sent. Every other key goes upstream untouched without reaching
// this package.
//
// The package sits above proxy, coordinator, migration, translate,
// upstream and upstream/anchor: it is the only place that knows them all,
// and cmd/streamshift builds it and registers it once (Routes.Register).
// It knows the cluster of instances only as its Cluster interface
// (cluster.go), which package cluster's runtime implements; only
// cmd/streamshift imports cluster (imports_test.go).
//
// It owns the routing, never a group's state: the groups and their
// migration state are the coordinator's (the gate word and held joins
// on the group's executor, coordinator/migration_state.go and
// coordinator/classic.go), the online migration's drivers package migration's,
// the partitions' owners the cluster's. This package keeps what is typed by
// proxy: the outcomes that count forwarded requests in flight and feed the
// observer (migration.go), and the classic keys' routing (classic.go: the
// coordinator's one verdict, EnterClassic, then wait, translate or
// forward).
package route

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/upstream/anchor"
)

// Options are what the routes serve with.
type Options struct {
	Coordinator *coordinator.Coordinator
	// Ownership decides which groups are the proxy's; required.
	Ownership *coordinator.Ownership
	// Anchors keeps the anchor members upstream; required.
	Anchors *anchor.Manager
	// UpstreamMaxVersions maps API keys to the highest version the upstream
	// supports (from its ApiVersions); a missing key counts as kmsg's
	// maximum. Offset requests newer than that are down-converted.
	UpstreamMaxVersions map[int16]int16
	// Metadata, if set, is refreshed before a topology is first handed to
	// the coordinator when its source topics are not in the image yet, so a
	// new group does not wait a heartbeat interval for topics created just
	// before the app started.
	Metadata FreshMetadata
	// CoordinatorNode returns the upstream node coordinating a group (for
	// ListGroups: an owned group is listed by that broker only;
	// upstream.FindCoordinatorNode). Nil: every broker lists it.
	CoordinatorNode func(ctx context.Context, groupID string) (int32, error)
	// Migration, if not nil, turns the online migration on (migration's
	// doc.go): the classic group keys are routed too, and the offset and
	// StreamsGroupHeartbeat routes pass the migration gate. Nil: the
	// classic group keys go upstream untouched.
	Migration *MigrationOptions
	// Cluster, if not nil, shares the groups with other streamshift
	// instances (cluster.go): a group request of a group another instance
	// owns goes to that owner over the instances' links and its answer
	// comes back (clusterGate; requests of several groups are split by
	// owner, clusterSplit). Only while an instance of an earlier release
	// has no internal address (Cluster.Hops false) do such requests get
	// NOT_COORDINATOR and FindCoordinator name the owner's host. Nil: this
	// instance serves every group.
	Cluster Cluster
	// MuteBound is the longest a handler may keep its client muted before
	// the client gets its key's retriable error (COORDINATOR_NOT_AVAILABLE
	// where the key carries it) rather than silence: a held JoinGroup its
	// rebalance timeout, a held SyncGroup 35 s, a hopped request the
	// cluster's forward timeout, each with 2 s to spare. Default 25s,
	// below the clients' 30 s request.timeout.ms.
	MuteBound time.Duration
	// AnchorWait bounds how long a commit waits for the anchor to join
	// upstream before the client gets a retriable error. Default 20s.
	AnchorWait time.Duration
	// ClaimWait bounds the upstream check of a first join. Default 10s.
	ClaimWait time.Duration
	// AnchorLeaveTimeout bounds an anchor's leave before a DeleteGroups or
	// OffsetDelete goes upstream. Default 10s.
	AnchorLeaveTimeout time.Duration
	// AuthorizationCache is how long the broker's answer to one principal
	// (or client connection), resource and operation is reused
	// (authorize.go); zero asks the broker on every request.
	AuthorizationCache time.Duration
	// AuthorizationPerConnection keeps the answers per client connection
	// even where the proxy knows the connection's principal (a broker
	// whose principal builder is not Kafka's default).
	AuthorizationPerConnection bool
	// TopicCreator, if not nil, creates the internal topics the
	// coordinator's operations return (the coordinator is built with
	// CreateTopics), for a member whose principal the broker allows to
	// CREATE them (authorize_topics.go). Nil: none are created.
	TopicCreator coordinator.TopicCreator
	Log          zerolog.Logger
}

// FreshMetadata is a metadata source that can fetch on demand
// (*upstream.Metadata).
type FreshMetadata interface {
	Image() streams.MetadataImage
	Refresh(ctx context.Context) error
}

// Routes serves the intercepted keys through the proxy.
type Routes struct {
	o Options
	// mig is the online migration; nil when it is off.
	mig *Migration
	// p is the proxy the routes are registered on (Register).
	p *proxy.Proxy
	// auth asks the broker what a client's principal may do (authorize.go).
	auth *authorizer
}

// New returns the route set. With o.Migration it also installs the
// ownership's takeover hook (migration.New).
func New(o Options) (*Routes, error) {
	if o.Coordinator == nil || o.Ownership == nil || o.Anchors == nil {
		return nil, fmt.Errorf("route: coordinator, ownership and anchors are required")
	}
	o.AnchorWait = cmp.Or(o.AnchorWait, 20*time.Second)
	o.ClaimWait = cmp.Or(o.ClaimWait, 10*time.Second)
	o.AnchorLeaveTimeout = cmp.Or(o.AnchorLeaveTimeout, 10*time.Second)
	o.MuteBound = cmp.Or(o.MuteBound, defaultMuteBound)
	rs := &Routes{o: o}
	rs.auth = newAuthorizer(o.AuthorizationCache, rs.upstreamMax)
	rs.auth.shared = !o.AuthorizationPerConnection
	if o.Migration != nil {
		m, err := newMigration(rs, *o.Migration)
		if err != nil {
			return nil, err
		}
		rs.mig = m
	}
	return rs, nil
}

// table is every intercepted key, in key order.
//
// OffsetCommit and OffsetFetch are advertised up to v9 even when the
// upstream is older (they are down-converted) and at most v9 when it is
// newer. TxnOffsetCommit keeps the upstream's range up to v5: a newer
// version may change the transaction protocol (KIP-890), not just the
// layout. The classic group keys and the admin keys keep the upstream's
// versions (the admin ones capped to what kmsg decodes) and are not
// advertised.
func (rs *Routes) table() []route {
	up := rs.upstreamMax
	top := func(k kmsg.Key) int16 { return kmsg.RequestForKey(int16(k)).MaxVersion() }
	rows := []route{
		{handler: handle(rs.offsetCommit), max: offsetsMaxVersion, advertise: true, capped: true},
		{handler: handle(rs.offsetFetch), max: offsetsMaxVersion, advertise: true, capped: true},
		{handler: handle(rs.findCoordinator), max: min(up(int16(kmsg.FindCoordinator)), top(kmsg.FindCoordinator)), cluster: true},
		{handler: classicKey[*kmsg.JoinGroupRequest](rs), max: up(int16(kmsg.JoinGroup)), migration: true},
		{handler: classicKey[*kmsg.HeartbeatRequest](rs), max: up(int16(kmsg.Heartbeat)), migration: true},
		{handler: classicKey[*kmsg.LeaveGroupRequest](rs), max: up(int16(kmsg.LeaveGroup)), migration: true},
		{handler: classicKey[*kmsg.SyncGroupRequest](rs), max: up(int16(kmsg.SyncGroup)), migration: true},
		{handler: handle(rs.describeGroups), max: top(kmsg.DescribeGroups), advertise: true, around: mentioned(rs, describeGroupsMentions)},
		{handler: handle(rs.listGroups), max: top(kmsg.ListGroups)},
		{handler: handle(rs.txnOffsetCommit), max: min(up(int16(kmsg.TxnOffsetCommit)), txnOffsetsMaxVersion), capped: true},
		{handler: handle(rs.describeConfigs), max: top(kmsg.DescribeConfigs), around: mentioned(rs, describeConfigsMentions)},
		{handler: handle(rs.deleteGroups), max: top(kmsg.DeleteGroups)},
		{handler: handle(rs.incrementalAlterConfigs), max: top(kmsg.IncrementalAlterConfigs)},
		{handler: handle(rs.offsetDelete), max: top(kmsg.OffsetDelete)},
		{handler: handle(rs.consumerGroupDescribe), max: top(kmsg.ConsumerGroupDescribe), advertise: true},
		{handler: handle(rs.streamsGroupHeartbeat), max: 1, advertise: true},
		{handler: handle(rs.streamsGroupDescribe), max: 1, advertise: true, around: mentioned(rs, streamsGroupDescribeMentions)},
	}
	for i := range rows {
		rows[i] = rs.row(rows[i])
	}
	return rows
}

// active is the table without the migration's keys when it is off, and
// without the cluster's when this instance is alone.
func (rs *Routes) active() []route {
	var out []route
	for _, rt := range rs.table() {
		if (!rt.migration || rs.mig != nil) && (!rt.cluster || rs.o.Cluster != nil) {
			out = append(out, rt)
		}
	}
	return out
}

// Register routes the active keys of p to rs, once: the proxy refuses a key
// registered twice.
func (rs *Routes) Register(p *proxy.Proxy) error {
	rs.p = p
	for _, rt := range rs.active() {
		register := p.Register
		if rt.capped {
			register = p.RegisterCapped
		}
		routed := rs.bounded(rt)
		if err := register(int16(rt.key), 0, rt.max, rt.advertise, routed); err != nil {
			return fmt.Errorf("route key %d (%s): %w", rt.key, rt.key.Name(), err)
		}
		if rs.o.Cluster != nil && hopKeys[rt.key] {
			if err := p.RegisterHop(int16(rt.key), rs.hopUndecoded(rt, routed)); err != nil {
				return fmt.Errorf("route key %d (%s): %w", rt.key, rt.key.Name(), err)
			}
		}
		if rt.key == kmsg.StreamsGroupHeartbeat {
			if err := p.LimitBody(int16(rt.key), maxStreamsHeartbeatBytes, oversizedStreamsHeartbeat); err != nil {
				return fmt.Errorf("route key %d (%s): %w", rt.key, rt.key.Name(), err)
			}
		}
	}
	return nil
}
