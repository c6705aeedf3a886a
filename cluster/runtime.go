package cluster

import (
	"context"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/internal/backoff"
	"github.com/streamshift/streamshift/internal/lockedmap"
	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/proxy/peer"
	"github.com/streamshift/streamshift/upstream"
	"github.com/streamshift/streamshift/upstream/anchor"
)

// Runtime is this instance's part in the cluster of instances that
// share the durable group log: the instance group says which log
// partitions are this instance's; gaining one acquires its writer (fencing
// the previous owner) and replays it before its groups are served; losing
// one (handed over, membership lost, or the writer fenced) unloads its
// groups at once and lets their anchors go to the next owner. It is the
// routes' Cluster (route/cluster.go).
type Runtime struct {
	log     *upstream.GroupLog
	parts   *coordinator.Partitions
	anchors *anchor.Manager
	self    upstream.InstanceInfo
	logger  zerolog.Logger
	// group is set once joined (Join); nil before.
	group atomic.Pointer[upstream.InstanceGroup]
	// routing is what a request's routing reads of the latest map (Hops,
	// Owner); nil before Join. routingMu orders its refreshes.
	routing   atomic.Pointer[routing]
	routingMu sync.Mutex
	// links are the internal listener and the links to the other
	// instances; the map they follow comes with join.
	links *Links

	// loading serializes the loads of each partition: a load that lost
	// its partition releases the writer it acquired, never a newer load's.
	loading []sync.Mutex
	// loadMu guards stopLoad: the cancel of each partition's load in
	// flight, which a revocation calls (and then waits for the load to
	// end, so a stale InitProducerId never fences the next owner).
	loadMu   sync.Mutex
	stopLoad map[int32]context.CancelFunc

	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once

	// firstLoad is closed once the first assignment's partitions are
	// loaded (or given up), so the proxy serves only then.
	firstLoad     chan struct{}
	firstLoadOnce sync.Once
	pending       atomic.Int32

	// m is links.metrics.
	m *metrics
	// serveCheck is Options.ServeCheck.
	serveCheck func(partition int32) bool
}

// Options are what New builds the runtime from.
type Options struct {
	// Log is the durable group log; Partitions its partitions' load
	// states and groups on this instance's coordinator.
	Log        *upstream.GroupLog
	Partitions *coordinator.Partitions
	// Anchors are the groups' anchor members: those of a partition that
	// goes are let go to the next owner.
	Anchors *anchor.Manager
	// Links are the internal listener and the links (StartLinks), bound
	// before the runtime exists; the runtime owns them from New on.
	Links *Links
	// Host is the host clients are told for this instance (the
	// advertised host, or the listen host).
	Host string
	// Registerer registers the cluster's metrics; nil: not registered.
	Registerer prometheus.Registerer
	Logger     zerolog.Logger
	// ServeCheck, for tests only, runs first in the check of every serve
	// call other instances send here (admitServe): false refuses the
	// call. A test holds or moves a partition between the origin's
	// routing and the owner's check with it.
	ServeCheck func(partition int32) bool
}

func releaseVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.Main.Version
	}
	return ""
}

// New builds the runtime and makes it the proxy's check of serve calls;
// Join starts it.
func New(o Options) *Runtime {
	ctx, cancel := context.WithCancel(context.Background())
	links := o.Links
	cr := &Runtime{
		log: o.Log, parts: o.Partitions, anchors: o.Anchors, logger: o.Logger, ctx: ctx, cancel: cancel,
		self:       upstream.InstanceInfo{ProxyID: links.self, Host: o.Host, Internal: links.internal, Version: releaseVersion()},
		links:      links,
		firstLoad:  make(chan struct{}),
		loading:    make([]sync.Mutex, o.Log.Partitions()),
		stopLoad:   map[int32]context.CancelFunc{},
		serveCheck: o.ServeCheck,
	}
	cr.m = links.metrics
	links.p.SetServeCheck(cr.admitServe)
	if o.Registerer != nil {
		o.Registerer.MustRegister(cr.m.collectors()...)
	}
	return cr
}

// Join joins the instance group, publishing this instance's internal
// address. o says where and how (Seeds, Opts, Group, SessionTimeout, and
// Fatal, told an error that must stop the instance); the runtime sets the
// rest: the log's topic and partitions, this instance, its callbacks.
func (cr *Runtime) Join(o upstream.InstanceGroupOptions) error {
	links := cr.links
	// The routes are registered by now: the versions the other instances
	// may carry here are known.
	cr.self.Served = links.p.ServedVersions()
	o.Topic, o.Partitions, o.Self = cr.log.Topic(), cr.log.Partitions(), cr.self
	o.Assigned, o.Revoked, o.MapChanged, o.Log = cr.assigned, cr.revoked, cr.mapChanged, cr.logger
	g, err := upstream.JoinInstanceGroup(o)
	if err != nil {
		return err
	}
	cr.group.Store(g)
	links.watch(g.Map)
	cr.mapChanged() // a map that came before the group was stored and watch started
	return nil
}

// mapChanged is the instance group's MapChanged, called right after it
// stored a new map: the routing follows it before the callback returns,
// and the links are woken to follow it too.
func (cr *Runtime) mapChanged() {
	if g := cr.group.Load(); g != nil {
		cr.refreshRouting(g.Map)
	}
	cr.links.mapChanged()
}

// routing is what a request's routing reads of one map, built once per
// map so that a request neither copies the map under the instance group's
// lock (Hops, Owner) nor looks its owner up among the map's instances.
type routing struct {
	gen int32
	// hops: every instance of the map has an internal address (none has
	// an earlier release).
	hops bool
	// owners[p] is partition p's owner's proxy id, if the map names an
	// owner it also lists (ClusterMap.Owner); else ok is false.
	owners []partitionOwner
}

type partitionOwner struct {
	id string
	ok bool
}

// refreshRouting stores the routing of the map current returns. Refreshes
// are serialized and each reads the map when it runs, so the last one
// stored is of the latest map: a refresh that read an older map cannot
// land after one that read a newer.
func (cr *Runtime) refreshRouting(current func() upstream.ClusterMap) {
	cr.routingMu.Lock()
	defer cr.routingMu.Unlock()
	m := current()
	r := &routing{gen: m.Generation, hops: true, owners: make([]partitionOwner, len(m.Owners))}
	for _, in := range m.Instances {
		if in.Internal == "" {
			r.hops = false
			break
		}
	}
	for p := range r.owners {
		if owner, ok := m.Owner(int32(p)); ok {
			r.owners[p] = partitionOwner{id: owner.ProxyID, ok: true}
		}
	}
	cr.routing.Store(r)
}

// assigned starts loading each partition gained, off the instance group's
// callback.
func (cr *Runtime) assigned(ps []int32) {
	cr.m.changes.Add(float64(len(ps)))
	cr.pending.Add(int32(len(ps)))
	for _, p := range ps {
		token := cr.parts.BeginLoad(p)
		ctx, cancel := context.WithCancel(cr.ctx)
		cr.loadMu.Lock()
		if prev := cr.stopLoad[p]; prev != nil {
			prev()
		}
		cr.stopLoad[p] = cancel
		cr.loadMu.Unlock()
		cr.wg.Add(1)
		go func() {
			defer cr.wg.Done()
			defer cr.loadDone()
			defer cancel()
			cr.load(ctx, p, token)
		}()
	}
}

// stopLoading cancels partition p's load in flight, if any, and waits
// until it ended.
func (cr *Runtime) stopLoading(p int32) {
	if cancel := lockedmap.Pop(&cr.loadMu, cr.stopLoad, p); cancel != nil {
		cancel()
	}
	// The load holds the partition's lock until it ended.
	cr.loading[p].Lock()
	defer cr.loading[p].Unlock()
}

func (cr *Runtime) loadDone() {
	if cr.pending.Add(-1) == 0 {
		cr.firstLoadOnce.Do(func() { close(cr.firstLoad) })
	}
}

// load acquires partition p and replays it, retrying while the partition
// is still this instance's to load.
func (cr *Runtime) load(ctx context.Context, p int32, token uint64) {
	cr.loading[p].Lock()
	defer cr.loading[p].Unlock()
	retry := backoff.Backoff{Min: 200 * time.Millisecond, Max: 5 * time.Second}
	for ctx.Err() == nil && cr.parts.State(p) == coordinator.PartitionLoading {
		start := time.Now()
		actx, cancel := context.WithTimeout(ctx, time.Minute)
		recs, err := cr.log.Acquire(actx, p)
		cancel()
		if err == nil {
			took := time.Since(start)
			ok, lerr := cr.parts.FinishLoad(p, token, recs, took)
			if lerr != nil {
				cr.logger.Error().Err(lerr).Int32("partition", p).Msg("cluster: loading a group-log partition failed")
			}
			if ok {
				cr.m.loadTime.Observe(took.Seconds())
				return
			}
			if lerr == nil {
				// Taken away while it loaded.
				cr.log.Release(p)
				return
			}
		}
		wait := retry.Next()
		if err != nil {
			cr.logger.Warn().Err(err).Int32("partition", p).Dur("backoff", wait).Msg("cluster: acquiring a group-log partition failed; retrying")
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// revoked stops serving the partitions at once: their groups go, their
// anchors are let go (the next owner's anchor takes their static place),
// their writers close.
func (cr *Runtime) revoked(ps []int32) {
	cr.m.changes.Add(float64(len(ps)))
	for _, p := range ps {
		cr.drop(p)
		cr.stopLoading(p)
		cr.log.Release(p)
	}
}

// FencedPartition is the group log's OnFenced: a newer owner fenced this
// instance's writer of p (this instance was a zombie: its membership
// lapsed while it was stopped).
func (cr *Runtime) FencedPartition(p int32, err error) {
	cr.m.fenced.Inc()
	cr.logger.Warn().Err(err).Int32("partition", p).Msg("cluster: a newer owner fenced this instance's writer of a group-log partition; its groups are no longer served here")
	cr.drop(p)
}

func (cr *Runtime) drop(p int32) {
	cr.parts.Unload(p)
	for _, g := range cr.anchors.Groups() {
		if cr.parts.Of(g) == p {
			cr.anchors.Release(g)
		}
	}
}

// WaitFirstLoad waits until the first assignment is loaded, at most d.
func (cr *Runtime) WaitFirstLoad(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-cr.firstLoad:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// Serving implements route.Cluster.
func (cr *Runtime) Serving(group string) error { return cr.parts.Serving(group) }

// Coordinator implements route.Cluster: the owner's advertised host; with
// several instances, a node id of the owner's own.
func (cr *Runtime) Coordinator(group string, node int32) (string, int32, bool) {
	g := cr.group.Load()
	if g == nil {
		return "", 0, false
	}
	p := cr.parts.Of(group)
	m := g.Map()
	owner, ok := m.Owner(p)
	if !ok {
		return "", 0, false
	}
	if owner.ProxyID == cr.self.ProxyID && cr.parts.State(p) == coordinator.PartitionNotOwned {
		// The map says this instance, the writer was fenced: a newer map
		// is on its way.
		return "", 0, false
	}
	if len(m.Instances) <= 1 {
		return owner.Host, node, true
	}
	return owner.Host, upstream.InstanceNodeID(owner.ProxyID, node), true
}

// Owner implements route.Cluster: the owner of the group's partition in
// the latest map.
func (cr *Runtime) Owner(group string) (self bool, peer string, gen int32, ok bool) {
	r := cr.routing.Load()
	if r == nil {
		return false, "", 0, false
	}
	p := cr.parts.Of(group)
	if p < 0 || int(p) >= len(r.owners) || !r.owners[p].ok {
		return false, "", r.gen, false
	}
	if owner := r.owners[p].id; owner != cr.self.ProxyID {
		return false, owner, r.gen, true
	}
	// Loading or fenced: Serving answers.
	return true, "", r.gen, true
}

// Hops implements route.Cluster: every instance of the latest map has an
// internal address (none has an earlier release).
func (cr *Runtime) Hops() bool {
	r := cr.routing.Load()
	return r != nil && r.hops
}

// Forward implements route.Cluster: a serve call to peer over its link.
func (cr *Runtime) Forward(ctx context.Context, owner, group string, gen int32, req *proxy.Request, timeout time.Duration) ([]byte, error) {
	start := time.Now()
	var data []byte
	var err error
	if link := cr.links.links.Link(owner); link != nil {
		data, err = cr.links.p.ServeRemote(ctx, link, req, cr.parts.Of(group), gen, timeout)
	} else {
		cr.m.refused.WithLabelValues("link_down").Inc()
		err = &peer.Error{Peer: owner, Code: kerr.CoordinatorNotAvailable.Code, Result: peer.LinkDown, Reason: "no link to that instance"}
	}
	cr.m.forward(req.Key, err, time.Since(start))
	return data, err
}

// ForwardTimeout implements route.Cluster.
func (cr *Runtime) ForwardTimeout() time.Duration { return cr.links.timeout }

// Peers implements route.Cluster: the other instances of the latest map.
func (cr *Runtime) Peers() []string {
	g := cr.group.Load()
	if g == nil {
		return nil
	}
	var peers []string
	for id := range g.Map().Instances {
		if id != cr.self.ProxyID {
			peers = append(peers, id)
		}
	}
	sort.Strings(peers)
	return peers
}

// ServedGroups implements route.Cluster: a served-groups call to instance
// over its link.
func (cr *Runtime) ServedGroups(ctx context.Context, instance string, req *proxy.Request, timeout time.Duration) ([]kmsg.ListGroupsResponseGroup, error) {
	link := cr.links.links.Link(instance)
	if link == nil {
		return nil, &peer.Error{Peer: instance, Code: kerr.CoordinatorNotAvailable.Code, Reason: "no link to that instance"}
	}
	return cr.links.p.ServedGroups(ctx, link, req, timeout)
}

// admitServe is the proxy's check of a serve call before any handling
// (docs/one-address.md §6 rule 2): the partition is this instance's
// (loaded or loading: a loading one answers COORDINATOR_LOAD_IN_PROGRESS),
// and the origin's map is not newer than this instance's (a newer one
// means this instance missed a rebalance: a zombie back from a stop).
func (cr *Runtime) admitServe(partition, mapGeneration int32) bool {
	if cr.serveCheck != nil && !cr.serveCheck(partition) {
		return false
	}
	g := cr.group.Load()
	if g == nil || partition < 0 || partition >= cr.parts.Count() {
		return false
	}
	if cr.parts.State(partition) == coordinator.PartitionNotOwned {
		return false
	}
	return mapGeneration <= g.Map().Generation
}

// Leave hands every partition over (a graceful stop): the instance leaves
// the group, then drops what it still held.
func (cr *Runtime) Leave(ctx context.Context) {
	if g := cr.group.Load(); g != nil && cr.ctx.Err() == nil {
		if err := g.Leave(ctx); err != nil {
			cr.logger.Warn().Err(err).Msg("cluster: leaving the instance group")
		} else {
			cr.logger.Info().Msg("cluster: left the instance group; the other instances take this one's partitions")
		}
	}
	cr.Close()
}

// Close stops loading and drops every partition (without leaving).
func (cr *Runtime) Close() {
	cr.closeOnce.Do(func() {
		cr.cancel()
		if g := cr.group.Load(); g != nil {
			g.Close()
		}
		cr.links.Close()
		cr.wg.Wait()
		for _, s := range cr.parts.Status() {
			cr.drop(s.Partition)
		}
		cr.log.Close()
	})
}
