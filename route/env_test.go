package route

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/migration"
	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/upstream"
	"github.com/streamshift/streamshift/upstream/anchor"
)

// startProxy runs a proxy in front of upstream on free ports; stop ends it
// (also at the test's end).
func startProxy(t testing.TB, upstream []string, tune func(*proxy.Options), controlPlane ...kgo.Opt) (p *proxy.Proxy, listen string, stop func()) {
	t.Helper()
	for attempt := 0; attempt < 20; attempt++ {
		base := 20000 + rand.IntN(30000)
		listen := "127.0.0.1:" + strconv.Itoa(base)
		o := proxy.Options{
			Upstream: upstream, Listen: listen, NodeIDMin: 0, NodeIDMax: 3, EventLoops: 1,
			DialTimeout: 2 * time.Second, ShutdownTimeout: 5 * time.Second, Log: zerolog.Nop(),
			ControlPlane: controlPlane,
		}
		if tune != nil {
			tune(&o)
		}
		p, err := proxy.New(o)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		errCh := make(chan error, 1)
		go func() { errCh <- p.Run(ctx) }()
		deadline := time.Now().Add(10 * time.Second)
		for !p.Ready() && time.Now().Before(deadline) {
			select {
			case err := <-errCh:
				cancel()
				if err != nil && strings.Contains(err.Error(), "start listeners") {
					goto retry
				}
				t.Fatalf("proxy run: %v", err)
			case <-time.After(5 * time.Millisecond):
			}
		}
		if !p.Ready() {
			cancel()
			t.Fatal("proxy not ready")
		}
		stop = sync.OnceFunc(func() {
			cancel()
			<-errCh
		})
		t.Cleanup(stop)
		return p, listen, stop
	retry:
	}
	t.Fatal("no free ports")
	return nil, "", nil
}

// env is the production route set over kfake: a cluster (playing Kafka 3.9,
// no streams groups, unless told otherwise), a control-plane client, and a
// proxy in front of the cluster with the coordinator, ownership, anchors and
// New's routes registered as cmd/streamshift registers them, and a client
// through the proxy. newEnv builds it; the fields before the options are
// set by the builder.
type env struct {
	t       testing.TB
	ctx     context.Context
	cluster *kfake.Cluster
	ctl     *kgo.Client
	adm     *kadm.Client // direct to the cluster
	p       *proxy.Proxy
	addr    string      // the proxy's bootstrap address
	cl      *kgo.Client // through the proxy, client id "streams-app"
	broker  *kgo.Broker // the coordinator of group "app", through the proxy
	coord   *coordinator.Coordinator
	own     *coordinator.Ownership
	anchors *anchor.Manager
	routes  *Routes
	// stop ends the proxy, routes and coordinator of the current start.
	stop func()

	// Options (set by the functions given to newEnv).

	// brokers is the cluster's size (default 1).
	brokers int
	// upstream is the Kafka version kfake plays (default 3.9; nil: kfake's
	// own, the newest).
	upstream *kversion.Versions
	// partitions and topics are the topics the cluster starts with
	// (default "in", 4 partitions).
	partitions int32
	topics     []string
	// anchorHeartbeat is the anchors' heartbeat interval (default 100ms).
	anchorHeartbeat time.Duration
	// migration, if not nil, turns the online migration on with this
	// policy (the routes' Options.Migration).
	migration *migration.MigrationConfig
	// timeout bounds the whole test (default 60s).
	timeout time.Duration
	// recoveryWindow is the migration's RecoveryWindow (0: its default).
	recoveryWindow time.Duration
	// clock is the coordinator's (nil: the system clock).
	clock coordinator.Clock
	// streamsSession is the streams groups' session timeout (0: Kafka's
	// default, 45 s).
	streamsSession time.Duration
	// kopts, ctlOpts and clientOpts are more options of the cluster, of
	// the control-plane client and of the client through the proxy.
	kopts                    []kfake.Opt
	ctlOpts, proxyClientOpts []kgo.Opt
	// proxyOpts, if not nil, changes the proxy's options.
	proxyOpts func(*proxy.Options)
	// authCache is the routes' AuthorizationCache.
	authCache time.Duration
	// authPerConnection is the routes' AuthorizationPerConnection.
	authPerConnection bool
	// direct: no proxy and no client through it (p, addr, cl and broker
	// stay nil); the tests call the handlers with proxytest requests
	// (serve). The control plane still talks to the cluster.
	direct bool
}

// direct builds the env without a proxy (env.direct).
func direct(e *env) { e.direct = true }

// newEnv builds an env; opts change its options before anything starts.
func newEnv(t testing.TB, opts ...func(*env)) *env {
	t.Helper()
	e := &env{t: t, brokers: 1, upstream: kversion.V3_9_0(), partitions: 4, topics: []string{"in"},
		anchorHeartbeat: 100 * time.Millisecond, timeout: 60 * time.Second}
	for _, o := range opts {
		o(e)
	}
	kopts := append([]kfake.Opt{kfake.NumBrokers(e.brokers), kfake.SeedTopics(e.partitions, e.topics...)}, e.kopts...)
	if e.upstream != nil {
		kopts = append(kopts, kfake.MaxVersions(e.upstream))
	}
	cluster, err := kfake.NewCluster(kopts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	ctl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.MetadataMinAge(50 * time.Millisecond)}, e.ctlOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ctl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
	t.Cleanup(cancel)
	e.ctx, e.cluster, e.ctl, e.adm = ctx, cluster, ctl, kadm.NewClient(ctl)
	e.start()
	t.Cleanup(func() { e.stop() })
	return e
}

// start builds what a streamshift process holds: the coordinator, anchors,
// ownership and routes, registered on a new proxy, and a client through it.
func (e *env) start() {
	t := e.t
	md := upstream.NewMetadata(e.adm, time.Second)
	if err := md.Refresh(e.ctx); err != nil {
		t.Fatal(err)
	}
	go md.Run(e.ctx)
	cfg := streams.DefaultConfig()
	cfg.Defaults.InitialRebalanceDelay = 0
	if e.streamsSession > 0 {
		cfg.Defaults.SessionTimeout, cfg.Bounds = e.streamsSession, streams.DefaultBounds()
		cfg.Bounds.MinSessionTimeout = e.streamsSession
	}
	c, err := coordinator.New(coordinator.Options{Config: cfg, Clock: e.clock, Metadata: md, CreateTopics: true})
	if err != nil {
		t.Fatal(err)
	}
	anchors, err := anchor.New(anchor.Options{Client: e.ctl, InstanceID: "streamshift-test", HeartbeatInterval: e.anchorHeartbeat, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	own := coordinator.NewOwnership(c, upstream.NewGroups(e.ctl), nil)
	o := Options{
		Coordinator: c, Ownership: own, Anchors: anchors,
		Metadata:                   md,
		CoordinatorNode:            upstream.FindCoordinatorNode(e.ctl),
		AuthorizationCache:         e.authCache,
		AuthorizationPerConnection: e.authPerConnection,
		TopicCreator:               upstream.NewTopicCreator(e.ctl, md, 10*time.Second),
		Log:                        zerolog.Nop(),
	}
	if e.upstream != nil {
		o.UpstreamMaxVersions = upstreamMaxVersions(e.upstream)
	}
	if e.migration != nil {
		o.Migration = &MigrationOptions{Policy: *e.migration, Client: e.ctl, RecoveryWindow: e.recoveryWindow}
	}
	routes, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if e.direct {
		e.coord, e.own, e.anchors, e.routes = c, own, anchors, routes
		e.stop = sync.OnceFunc(func() {
			anchors.Close()
			c.Close()
		})
		return
	}
	p, addr, stopProxy := startProxy(t, e.cluster.ListenAddrs(), e.proxyOpts, e.ctlOpts...)
	if err := routes.Register(p); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr), kgo.ClientID("streams-app")}, e.proxyClientOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	e.p, e.addr, e.cl, e.coord, e.own, e.anchors, e.routes = p, addr, cl, c, own, anchors, routes
	e.stop = sync.OnceFunc(func() {
		cl.Close()
		stopProxy()
		anchors.Close() // without leaving, as a process stops
		c.Close()
	})
	e.broker = e.coordinatorOf("app", cl)
}

// restart replaces the proxy, coordinator, anchors and ownership by fresh
// ones (in-memory state lost, as a proxy restart without a durable log),
// the old anchors closed without leaving.
func (e *env) restart() {
	e.stop()
	e.start()
}

// coordinatorOf is the connection of cl, through the proxy, to the
// upstream coordinator of group.
func (e *env) coordinatorOf(group string, cl *kgo.Client) *kgo.Broker {
	e.t.Helper()
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey, fc.CoordinatorKeys = group, []string{group}
	fresp, err := fc.RequestWith(e.ctx, cl)
	if err != nil {
		e.t.Fatal(err)
	}
	node := fresp.NodeID
	if len(fresp.Coordinators) > 0 {
		node = fresp.Coordinators[0].NodeID
	}
	return cl.Broker(int(node))
}

// client is a new client through the proxy.
func (e *env) client(opts ...kgo.Opt) *kgo.Client {
	e.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(e.addr)}, opts...)...)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(cl.Close)
	return cl
}

func upstreamMaxVersions(v *kversion.Versions) map[int16]int16 {
	out := map[int16]int16{}
	v.EachMaxKeyVersion(func(k, max int16) { out[k] = max })
	return out
}

// withMigration turns the online migration on with policy.
func withMigration(policy migration.MigrationPolicy) func(*env) {
	return func(e *env) { e.migration = &migration.MigrationConfig{Policy: policy} }
}

// TestThroughProxy sends StreamsGroupHeartbeat and StreamsGroupDescribe with
// a franz-go client through the proxy in front of kfake: the coordinator
// answers, with topic metadata read from the cluster.
func TestThroughProxy(t *testing.T) {
	e := newEnv(t, func(e *env) {
		e.upstream, e.partitions, e.topics, e.timeout = nil, 3, []string{"words"}, 20*time.Second
	})
	ctx, cl, adm := e.ctx, e.cl, e.adm

	// The proxy advertises both keys.
	versions, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, k := range versions.ApiKeys {
		if (k.ApiKey == 88 || k.ApiKey == 89) && k.MaxVersion == 1 {
			found++
		}
	}
	if found != 2 {
		t.Fatalf("ApiVersions lacks 88/89 v1: %+v", versions.ApiKeys)
	}

	// kgo does not route streams-group requests to the group coordinator
	// itself: the env found it (e.broker), talk to that node (through its
	// proxy port).
	broker := e.broker

	join := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	join.Group = "app"
	join.MemberID = "member-1"
	join.EndpointInformationEpoch = -1
	join.RebalanceTimeoutMillis = 30000
	pid := "process-1"
	join.ProcessID = &pid
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	st.SubtopologyID = "0"
	st.SourceTopics = []string{"words"}
	st.StateChangelogTopics = []kmsg.TopicInfo{{Topic: "app-counts-changelog", Configs: []kmsg.TopicInfoConfig{{Key: "cleanup.policy", Value: "compact"}}}}
	topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{st}
	join.Topology = &topo
	join.ActiveTasks, join.StandbyTasks, join.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	resp, err := join.RequestWith(ctx, broker)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 0 || len(resp.Status) != 1 || resp.Status[0].StatusCode != streams.StatusMissingInternalTopics {
		t.Fatalf("join: %+v", resp)
	}
	// The coordinator creates the changelog upstream; once the metadata
	// shows it, the member gets its tasks.
	var epoch int32 = resp.MemberEpoch
	for {
		hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		hb.Group, hb.MemberID, hb.MemberEpoch = "app", "member-1", epoch
		resp, err = hb.RequestWith(ctx, broker)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ErrorCode != 0 {
			t.Fatalf("heartbeat: %+v", resp)
		}
		epoch = resp.MemberEpoch
		if len(resp.Status) == 0 && resp.ActiveTasks != nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("never assigned: %+v", resp)
		case <-time.After(100 * time.Millisecond):
		}
	}
	if len(resp.ActiveTasks) != 1 || len(resp.ActiveTasks[0].Partitions) != 3 {
		t.Fatalf("tasks %+v", resp.ActiveTasks)
	}
	topics, err := adm.ListTopics(ctx, "app-counts-changelog")
	if err != nil || len(topics["app-counts-changelog"].Partitions) != 3 {
		t.Fatalf("changelog upstream: %+v %v", topics, err)
	}

	desc := kmsg.NewPtrStreamsGroupDescribeRequest()
	desc.Groups = []string{"app"}
	dresp, err := desc.RequestWith(ctx, broker)
	if err != nil {
		t.Fatal(err)
	}
	if len(dresp.Groups) != 1 || dresp.Groups[0].State != "Stable" || len(dresp.Groups[0].Members) != 1 ||
		dresp.Groups[0].Members[0].ClientID != "streams-app" || !strings.HasPrefix(dresp.Groups[0].Members[0].ClientHost, "/127.0.0.1") {
		t.Fatalf("describe: %+v", dresp.Groups)
	}
}
