package main

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/streamshift/streamshift/cluster"
	"github.com/streamshift/streamshift/config"
	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/route"
	"github.com/streamshift/streamshift/upstream"
	"github.com/streamshift/streamshift/upstream/anchor"
)

// streamsRuntime is the streams-group coordinator wired to the upstream.
type streamsRuntime struct {
	ctl     *kgo.Client
	coord   *coordinator.Coordinator
	anchors *anchor.Manager
	topic   *upstream.GroupLog
	// cluster is this instance's share of the groups with the durable log
	// (package cluster); nil without it.
	cluster *cluster.Runtime
	// links are the internal listener and links (cluster.StartLinks),
	// bound first: a taken port stops the instance before it changes
	// anything upstream. The cluster owns them once it exists.
	links  *cluster.Links
	cancel context.CancelFunc
}

// controlPlaneOpts are the kgo options of every control-plane client.
func controlPlaneOpts(cfg *config.Config) []kgo.Opt {
	// kadm serves topic listings from kgo's metadata cache, which is only
	// refreshed after MetadataMinAge (default 5s): a short age lets a
	// requested refresh see new source and internal topics at once.
	opts := []kgo.Opt{kgo.SeedBrokers(cfg.Upstream...), kgo.DialTimeout(cfg.UpstreamDialTimeout), kgo.MetadataMinAge(100 * time.Millisecond)}
	if m := controlPlaneSASL(cfg); m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	if t := cfg.UpstreamTLSConfig(); t != nil {
		opts = append(opts, kgo.DialTLSConfig(t))
	}
	return opts
}

// controlPlaneSASL is streamshift's own SASL mechanism and credentials
// (control-plane.sasl-*), nil without: the control plane's, and the
// links' between instances (run_cluster_options.go).
func controlPlaneSASL(cfg *config.Config) sasl.Mechanism {
	cp := cfg.ControlPlane
	switch cp.SASLMechanism {
	case "PLAIN":
		return plain.Auth{User: cp.SASLUsername, Pass: cp.SASLPassword}.AsMechanism()
	case "SCRAM-SHA-256":
		return scram.Auth{User: cp.SASLUsername, Pass: cp.SASLPassword}.AsSha256Mechanism()
	case "SCRAM-SHA-512":
		return scram.Auth{User: cp.SASLUsername, Pass: cp.SASLPassword}.AsSha512Mechanism()
	}
	return nil
}

// startStreams builds the coordinator, its upstream integration (metadata,
// internal topics, ownership, anchor members, the durable log and this
// instance's share of its partitions) and the routes of the intercepted
// keys (package route), registered on p once. events hears the
// coordinator's and the migration's events (the capture, the status page
// and its metrics). With the durable log it returns once the partitions
// first assigned to this instance are loaded (or after a bound); fatal is
// told an error that must stop the instance (a duplicate proxy id or
// advertised host in the cluster). tw are serve's tweaks (the cluster's
// test hooks).
func startStreams(ctx context.Context, cfg *config.Config, p *proxy.Proxy, reg prometheus.Registerer, events groupEvents, log zerolog.Logger, fatal func(error), tw []serveTweak) (*streamsRuntime, error) {
	ccfg, err := cfg.Streams.CoordinatorConfig()
	if err != nil {
		return nil, err
	}
	ctl, err := kgo.NewClient(append(controlPlaneOpts(cfg), p.UpstreamRequestsHook())...)
	if err != nil {
		return nil, fmt.Errorf("control-plane client: %w", err)
	}
	rctx, cancel := context.WithCancel(ctx)
	rt := &streamsRuntime{ctl: ctl, cancel: cancel}
	ok := false
	defer func() {
		if !ok {
			rt.close()
		}
	}()
	if cfg.Coordinator.DurableLog {
		p.Starting("binding the internal listener (cluster.listen)")
		lo := clusterLinkOptions(cfg, log.With().Str("component", "cluster").Logger())
		for _, t := range tw {
			if t.links != nil {
				t.links(&lo)
			}
		}
		if rt.links, err = cluster.StartLinks(p, lo); err != nil {
			return nil, err
		}
	}
	// Everything below needs the upstream: wait for it, saying so.
	p.Starting("waiting for the upstream brokers (--upstream) to answer")
	if err := awaitUpstream(ctx, ctl, cfg.Upstream, cfg.UpstreamDialTimeout+time.Second, log); err != nil {
		return nil, err
	}
	adm := kadm.NewClient(ctl)
	meta := upstream.NewMetadata(adm, cfg.Coordinator.MetadataRefreshInterval)
	go meta.Run(rctx)

	// Internal topics the coordinator's operations return are created for
	// a member that may CREATE them (the broker's answer for its own
	// principal, route/authorize_topics.go).
	topicCreator := upstream.NewTopicCreator(ctl, meta, 0)
	expired := &expiredAnchors{
		leave:   func(ctx context.Context, group string) error { return rt.anchors.Leave(ctx, group) },
		served:  func(group string) bool { return rt.coord.Owns(group) },
		timeout: 30 * time.Second,
		log:     log.With().Str("component", "anchor").Logger(),
		count:   newExpiredCounter(),
	}
	opts := coordinator.Options{
		Config:          ccfg,
		Metadata:        meta,
		CreateTopics:    true,
		Events:          events,
		Logger:          log.With().Str("component", "coordinator").Logger(),
		GroupExpiration: cfg.Coordinator.OffsetsRetentionCheckInterval,
		// Set before any group exists: rt.anchors and rt.coord are set
		// below, before the routes serve.
		OnGroupExpired: expired.expired,
		// Disconnect expiry (docs/fast-roll.md §5).
		DisconnectExpiryHeartbeats: cfg.Migration.Disconnect.Expiry.Heartbeats,
	}
	checkACLs(ctx, cfg, log)
	durable := cfg.Coordinator.DurableLog
	if durable {
		p.Starting("opening the group log " + cfg.Coordinator.LogTopic)
		octx, ocancel := context.WithTimeout(ctx, time.Minute)
		rt.topic, err = upstream.OpenSharedGroupLog(octx, upstream.GroupLogOptions{
			Seeds:      cfg.Upstream,
			Topic:      cfg.Coordinator.LogTopic,
			Partitions: cfg.Coordinator.LogPartitions,
			Opts:       append(controlPlaneOpts(cfg)[1:], p.UpstreamRequestsHook()),
			Log:        log,
			OnFenced: func(p int32, err error) {
				if cr := rt.cluster; cr != nil {
					cr.FencedPartition(p, err)
				}
			},
		})
		ocancel()
		if err != nil {
			return nil, err
		}
		opts.Log = rt.topic
	}
	if rt.coord, err = coordinator.New(opts); err != nil {
		return nil, err
	}
	rt.anchors, err = anchor.New(anchor.Options{
		Client:            ctl,
		InstanceID:        cfg.AnchorInstanceID(),
		SessionTimeout:    cfg.Coordinator.AnchorSessionTimeout,
		HeartbeatInterval: cfg.Coordinator.AnchorHeartbeatInterval,
		RebalanceTimeout:  cfg.Coordinator.AnchorRebalanceTimeout,
		MaxInflight:       cfg.Coordinator.AnchorMaxInflight,
		YieldWhenReplaced: durable,
		Log:               log.With().Str("component", "anchor").Logger(),
	})
	if err != nil {
		return nil, err
	}
	registerAnchorMetrics(reg, rt.anchors, expired.count)
	var routeCluster route.Cluster
	if durable {
		co := cluster.Options{
			Log:        rt.topic,
			Partitions: coordinator.NewPartitions(rt.coord, rt.topic.Partitions()),
			Anchors:    rt.anchors,
			Links:      rt.links,
			Host:       advertisedHost(cfg),
			Registerer: reg,
			Logger:     log.With().Str("component", "cluster").Logger(),
		}
		for _, t := range tw {
			if t.cluster != nil {
				t.cluster(&co)
			}
		}
		rt.cluster = cluster.New(co)
		routeCluster = rt.cluster
	}
	mig, err := migrationOptions(cfg, ctl, ccfg.Defaults.HeartbeatInterval)
	if err != nil {
		return nil, err
	}
	mig.Events = events
	p.Starting("asking the upstream for its API versions")
	routes, err := route.New(route.Options{
		Coordinator:                rt.coord,
		Ownership:                  coordinator.NewOwnership(rt.coord, upstream.NewGroups(ctl), nil),
		Anchors:                    rt.anchors,
		UpstreamMaxVersions:        upstreamVersions(ctx, ctl, log),
		Metadata:                   meta,
		CoordinatorNode:            upstream.FindCoordinatorNode(ctl),
		Migration:                  mig,
		Cluster:                    routeCluster,
		AuthorizationCache:         cfg.Authorization.CacheTTL,
		AuthorizationPerConnection: cfg.Authorization.PerConnection,
		TopicCreator:               topicCreator,
		Log:                        log.With().Str("component", "streams").Logger(),
	})
	if err != nil {
		return nil, err
	}
	registerAuthorizationMetrics(reg, routes)
	// The one registration of the intercepted keys.
	if err := routes.Register(p); err != nil {
		return nil, fmt.Errorf("register routes: %w", err)
	}
	if rt.links != nil {
		// Other instances' ListGroups ask for the groups served here.
		p.SetServedGroups(routes.ServedGroups)
	}
	logMigration(mig, log)
	if durable {
		// Serve once this instance's first partitions are loaded; a
		// partition still loading answers COORDINATOR_LOAD_IN_PROGRESS.
		bound := 3 * cfg.Coordinator.InstanceSessionTimeout
		p.Starting("joining the instance group " + cfg.InstanceGroup() + " and loading this instance's group-log partitions (serving after at most " + bound.String() + ")")
		if err := rt.cluster.Join(upstream.InstanceGroupOptions{
			Seeds:          cfg.Upstream,
			Opts:           append(controlPlaneOpts(cfg)[1:], p.UpstreamRequestsHook()),
			Group:          cfg.InstanceGroup(),
			SessionTimeout: cfg.Coordinator.InstanceSessionTimeout,
			Fatal:          fatal,
		}); err != nil {
			return nil, err
		}
		if !rt.cluster.WaitFirstLoad(ctx, bound) && ctx.Err() == nil {
			log.Warn().Dur("waited", bound).Msg("cluster: the first partitions of this instance are not loaded yet; serving meanwhile")
		}
	}
	log.Info().Str("anchor_instance_id", cfg.AnchorInstanceID()).Bool("durable_log", durable).
		Str("cluster", cfg.InstanceGroup()).Msg("streams-group coordinator ready")
	ok = true
	return rt, nil
}

// handOver gives this instance's partitions to the other instances (a
// graceful stop), before the proxy drains.
func (rt *streamsRuntime) handOver(ctx context.Context) {
	if rt.cluster != nil {
		rt.cluster.Leave(ctx)
	}
}

// upstreamVersions asks the upstream for its API versions; unknown keys (or
// an unreachable upstream) count as kmsg's maximum.
func upstreamVersions(ctx context.Context, ctl *kgo.Client, log zerolog.Logger) map[int16]int16 {
	out := map[int16]int16{}
	for attempt := 0; attempt < 10; attempt++ {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(rctx, ctl)
		cancel()
		if err == nil && resp.ErrorCode == 0 {
			for _, k := range resp.ApiKeys {
				out[k.ApiKey] = k.MaxVersion
			}
			checkUpstreamRelease(out, log)
			return out
		}
		log.Warn().Err(err).Int("attempt", attempt+1).Msg("upstream ApiVersions")
		select {
		case <-ctx.Done():
			return out
		case <-time.After(time.Second):
		}
	}
	return out
}

func (rt *streamsRuntime) close() {
	if rt.cluster != nil {
		rt.cluster.Close()
	} else if rt.links != nil {
		rt.links.Close()
	}
	if rt.anchors != nil {
		rt.anchors.Close() // static anchors stay upstream for the next start
	}
	if rt.coord != nil {
		rt.coord.Close()
	}
	rt.cancel()
	if rt.topic != nil {
		rt.topic.Close()
	}
	rt.ctl.Close()
}
