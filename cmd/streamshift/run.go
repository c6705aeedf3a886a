package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rs/zerolog"

	"github.com/streamshift/streamshift/config"
	"github.com/streamshift/streamshift/internal/logcap"
	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/status"
)

// runCmd is `streamshift run`: the proxy in front of the upstream cluster.
func runCmd(args []string) int {
	cfg, log, code := loadConfig("run", args)
	if cfg == nil {
		return code
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return serve(ctx, cfg, log, nil)
}

// loadConfig loads the configuration of command (run, demo) from args, the
// STREAMSHIFT_* environment and the --config file, and its logger, with the
// warnings logged. A nil cfg ends the command with code (0 after --help).
func loadConfig(command string, args []string) (cfg *config.Config, log zerolog.Logger, code int) {
	cfg, warnings, err := config.Load(args, os.Environ(), os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil, log, 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "streamshift %s: %v\n", command, err)
		return nil, log, 2
	}
	log = newLogger(cfg.Log)
	for _, w := range warnings {
		log.Warn().Msg(w)
	}
	cfg.OnUpstreamTLSReload(func(err error) {
		if err != nil {
			log.Error().Err(err).Msg("upstream TLS files; connecting with the ones loaded before")
			return
		}
		log.Info().Msg("upstream TLS files reloaded")
	})
	return cfg, log, 0
}

// serve is the one wiring of streamshift, for `run` and `demo`: the proxy
// in front of cfg.Upstream, its admin listener, the streams-group
// coordinator and the routes of the intercepted keys, until ctx ends (then
// the proxy drains and the coordinator closes). ready, if set, runs in its
// own goroutine once the proxy accepts connections, with ctx and the admin
// listener's address (empty when it is off); serve returns after it does.
// The result is the process's exit code. tweaks adjust the proxy's options
// (the demo's quieter connection lines).
func serve(ctx context.Context, cfg *config.Config, log zerolog.Logger, ready func(ctx context.Context, admin string), tweaks ...func(*proxy.Options)) int {
	var clusterView atomic.Pointer[clusterRuntime]
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	registerBuildInfo(reg)
	rec, err := newRecorder(cfg, log, reg)
	if err != nil {
		log.Error().Err(err).Msg("capture")
		return 2
	}
	defer rec.Close()
	groupMetrics := status.NewMetrics(reg)
	statusEvents := status.NewEvents(groupMetrics)
	var statusSrv atomic.Pointer[status.Server]
	popts := proxyOptions(cfg, log, reg)
	popts.Tap = captureTap{rec}
	for _, tw := range tweaks {
		tw(&popts)
	}
	p, err := proxy.New(popts)
	if err != nil {
		log.Error().Err(err).Msg("invalid proxy configuration")
		return 2
	}

	admin := ""
	if cfg.AdminListen != "" {
		ln, err := net.Listen("tcp", cfg.AdminListen)
		if err != nil {
			log.Error().Err(err).Str("admin_listen", cfg.AdminListen).Msg("admin listener")
			return 1
		}
		admin = ln.Addr().String()
		srv := &http.Server{Handler: withCluster(adminWithStatus(adminWithCapture(p.AdminHandler(reg), rec), statusSrv.Load), &clusterView), ReadHeaderTimeout: 5 * time.Second}
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error().Err(err).Msg("admin server")
			}
		}()
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
		}()
		log.Info().Str("admin_listen", admin).Msg("admin endpoints: /healthz /readyz /metrics /capture /ui /api/groups /cluster")
	}

	// The proxy runs until ctx ends (then this instance first hands its
	// log partitions over, so the other instances serve its groups while
	// it drains) or the cluster refuses this instance (fatal).
	var fatalErr atomic.Pointer[error]
	pctx, stopProxy := context.WithCancel(context.Background())
	defer stopProxy()
	fatal := func(err error) {
		fatalErr.CompareAndSwap(nil, &err)
		stopProxy()
	}
	// Every listener is bound before anything changes upstream (the group
	// log topic, the instance group, anchors): a taken port stops the start
	// with nothing to undo. Clients are closed at once until p.Run.
	if err := p.Listen(pctx); err != nil {
		log.Error().Err(err).Msg("proxy failed")
		return 1
	}
	defer p.Close()
	streams, err := startStreams(ctx, cfg, p, reg, groupEvents{captureEvents{rec}, statusEvents, newGroupACLCheck(cfg, log.With().Str("component", "acl-check").Logger())}, log, fatal)
	if err != nil {
		log.Error().Err(err).Msg("streams-group coordinator")
		return 1
	}
	defer streams.close()
	groupMetrics.Bind(streams.coord, statusEvents)
	sopts := status.Options{Coordinator: streams.coord, Events: statusEvents, FlightRecorders: flightRecorders(rec),
		EndOffsets: changelogEndOffsets(streams.ctl)}
	var stCluster *statusCluster
	if streams.cluster != nil {
		clusterView.Store(streams.cluster)
		stCluster = &statusCluster{cr: streams.cluster}
		sopts.Cluster = stCluster
	}
	statusSrv.Store(status.New(sopts))
	go func() {
		select {
		case <-ctx.Done():
			if stCluster != nil {
				stCluster.leaving.Store(true)
			}
			hctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			streams.handOver(hctx)
			cancel()
			stopProxy()
		case <-pctx.Done():
		}
	}()

	if ready != nil {
		rctx, cancel := context.WithCancel(ctx) // also ends when the proxy fails
		done := make(chan struct{})
		defer func() { cancel(); <-done }()
		go func() {
			defer close(done)
			for !p.Ready() {
				select {
				case <-rctx.Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
			ready(rctx, admin)
		}()
	}

	if err := p.Run(pctx); err != nil {
		log.Error().Err(err).Msg("proxy failed")
		return 1
	}
	if e := fatalErr.Load(); e != nil {
		log.Error().Err(*e).Msg("streamshift stops: the cluster refused this instance")
		return 1
	}
	return 0
}

// withCluster adds /cluster (the instances, the owners of the group-log
// partitions, this instance's load states) to the admin endpoints; 404
// without the durable log.
func withCluster(admin http.Handler, view *atomic.Pointer[clusterRuntime]) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", admin)
	mux.HandleFunc("/cluster", func(w http.ResponseWriter, r *http.Request) {
		cr := view.Load()
		if cr == nil {
			http.Error(w, "no cluster: coordinator.durable-log is off", http.StatusNotFound)
			return
		}
		cr.ServeHTTP(w, r)
	})
	return mux
}

// proxyOptions maps the configuration onto the proxy's options. The proxy's
// own upstream client (node-table metadata) authenticates like the
// coordinator's control plane.
func proxyOptions(cfg *config.Config, log zerolog.Logger, reg prometheus.Registerer) proxy.Options {
	return proxy.Options{
		Upstream:            cfg.Upstream,
		Listen:              cfg.Listen,
		AdvertisedHost:      cfg.AdvertisedHost,
		NodePortBase:        cfg.NodePortBase,
		NodeIDMin:           cfg.NodeIDMin,
		NodeIDMax:           cfg.NodeIDMax,
		DialTimeout:         cfg.UpstreamDialTimeout,
		MaxFrameBytes:       cfg.Limits.MaxFrameBytes,
		MaxInterceptedBytes: cfg.Limits.MaxInterceptedBytes,
		MaxInflight:         cfg.Limits.MaxInflightRequests,
		BufferHighWater:     cfg.Limits.BufferHighWaterBytes,
		MaxConnections:      cfg.Limits.MaxConnections,
		MaxConnectionsPerIP: cfg.Limits.MaxConnectionsPerIP,
		RequestTimeout:      cfg.Limits.RequestTimeout,
		ConnectionsMaxIdle:  cfg.Limits.ConnectionsMaxIdle,
		MaxBufferedBytes:    cfg.Limits.MaxBufferedBytes,
		ShutdownTimeout:     cfg.ShutdownTimeout,
		MetadataRefresh:     cfg.MetadataRefreshInterval,
		EventLoops:          cfg.EventLoops,
		ControlPlane:        controlPlaneOpts(cfg),
		TLS:                 listenerTLS(cfg.TLS),
		UpstreamTLS:         cfg.UpstreamTLSConfig(),
		Log:                 log,
		Metrics:             reg,
	}
}

func newLogger(c config.Log) zerolog.Logger { return newLoggerTo(c, os.Stderr) }

func newLoggerTo(c config.Log, w io.Writer) zerolog.Logger {
	level, _ := zerolog.ParseLevel(c.Level) // validated by config
	// Lines carry client-supplied strings (ids of up to megabytes): the
	// capping writer bounds each line, before the console writer too.
	out := w
	if c.Format == "console" {
		// Colours only on a terminal: not in a file or a pipe.
		st, err := os.Stderr.Stat()
		noColor := err != nil || st.Mode()&os.ModeCharDevice == 0 || w != io.Writer(os.Stderr)
		out = zerolog.ConsoleWriter{Out: w, TimeFormat: time.RFC3339, NoColor: noColor}
	}
	log := zerolog.New(logcap.New(out))
	return log.Level(level).With().Timestamp().Logger()
}
