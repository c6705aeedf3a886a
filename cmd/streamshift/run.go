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
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rs/zerolog"

	"github.com/streamshift/streamshift/cluster"
	"github.com/streamshift/streamshift/config"
	"github.com/streamshift/streamshift/internal/logcap"
	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/status"
)

// runCmd is `streamshift run`: the proxy in front of the upstream cluster.
func runCmd(args []string) int {
	cfg, log, code := loadConfig("run", args, func(w io.Writer) { config.PrintUsage(w, "run") })
	if cfg == nil {
		return code
	}
	ctx, stop := onStopSignal(context.Background())
	defer stop()
	return serve(ctx, cfg, log, nil)
}

// loadConfig loads the configuration of command (run, demo) from args, the
// STREAMSHIFT_* environment and the --config file, and its logger, with the
// warnings logged. A nil cfg ends the command with code (0 after --help).
// usage writes the command's short usage, shown after a command line that
// does not parse.
func loadConfig(command string, args []string, usage func(io.Writer)) (cfg *config.Config, log zerolog.Logger, code int) {
	cfg, warnings, err := config.Load(args, os.Environ(), os.Stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil, log, 0
	}
	if err != nil {
		printConfigError(os.Stderr, command, err, usage)
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

// printConfigError writes a configuration or command-line error, one
// problem a line, each with the command's name; after a command line that
// does not parse, the short usage.
func printConfigError(w io.Writer, command string, err error, usage func(io.Writer)) {
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintf(w, "streamshift %s: %s\n", command, line)
	}
	var ue *config.UsageError
	if errors.As(err, &ue) {
		fmt.Fprintln(w)
		usage(w)
	}
}

// serve is the one wiring of streamshift, for `run` and `demo`: the proxy
// in front of cfg.Upstream, its admin listener, the streams-group
// coordinator and the routes of the intercepted keys, until ctx ends (then
// the proxy drains and the coordinator closes). ready, if set, runs in its
// own goroutine once the proxy accepts connections, with ctx and the admin
// listener's address (empty when it is off); serve returns after it does.
// The result is the process's exit code. tweaks adjust what serve builds.
func serve(ctx context.Context, cfg *config.Config, log zerolog.Logger, ready func(ctx context.Context, admin string), tweaks ...serveTweak) int {
	var clusterView atomic.Pointer[cluster.Runtime]
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
		if tw.proxy != nil {
			tw.proxy(&popts)
		}
	}
	p, err := proxy.New(popts)
	if err != nil {
		log.Error().Err(err).Msg("invalid proxy configuration")
		return 2
	}
	keepMemoryLimit(ctx, popts.MaxBufferedBytes, p.BufferedBytes, log)

	admin := ""
	if cfg.AdminListen != "" {
		ln, err := net.Listen("tcp", cfg.AdminListen)
		if err != nil {
			log.Error().Err(err).Str("admin_listen", cfg.AdminListen).Msg("admin listener")
			return 1
		}
		admin = ln.Addr().String()
		handler, err := newAdminGuard(withCluster(adminWithStatus(adminWithCapture(p.AdminHandler(reg), rec), statusSrv.Load), &clusterView), cfg.Admin, log)
		if err != nil {
			_ = ln.Close()
			log.Error().Err(err).Str("file", cfg.Admin.AuthTokenFile).Msg("admin.auth-token-file")
			return 2
		}
		if cfg.Admin.TLS {
			if ln, err = adminTLS(ln, cfg.TLS, log); err != nil {
				log.Error().Err(err).Msg("admin.tls: the listeners' certificate")
				return 2
			}
		}
		if cfg.Admin.AuthTokenFile == "" && adminOpen(admin) {
			log.Warn().Str("admin_listen", admin).Msg("the admin listener is reachable beyond this host and admin.auth-token-file is not set: anyone who reaches it can start and stop captures")
		}
		srv := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second}
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
		log.Info().Str("admin_listen", admin).Bool("tls", cfg.Admin.TLS).Bool("token", cfg.Admin.AuthTokenFile != "").Bool("pprof", cfg.Admin.Pprof).
			Msg("admin endpoints: /healthz /readyz /metrics /capture /ui /api/groups /cluster")
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
	// A stop (SIGTERM, Ctrl-C) at any moment is logged once, naming the
	// signal and what the instance was doing; during the start it ends
	// the step under way, and the instance exits 0 as from a drain.
	logged := make(chan struct{})
	stopLog := context.AfterFunc(ctx, func() {
		defer close(logged)
		sig, cause := stopCause(ctx)
		state := p.NotReady()
		if state == "" {
			state = "serving"
		}
		log.Info().Str("signal", sig).Str("cause", cause).Str("state", state).Msg("stopping")
	})
	defer func() {
		if !stopLog() {
			<-logged // the line is out before the process exits
		}
	}()
	// Every listener is bound before anything changes upstream (the group
	// log topic, the instance group, anchors): a taken port stops the start
	// with nothing to undo. Clients wait in the accept queue until p.Run.
	if err := p.Listen(ctx); err != nil {
		if ctx.Err() != nil {
			return 0
		}
		log.Error().Err(err).Msg("proxy failed")
		return 1
	}
	defer p.Close()
	if ctx.Err() != nil {
		return 0
	}
	streams, err := startStreams(ctx, cfg, p, reg, groupEvents{captureEvents{rec}, statusEvents, newGroupACLCheck(cfg, log.With().Str("component", "acl-check").Logger())}, log, fatal, tweaks)
	if err != nil {
		if ctx.Err() != nil {
			return 0 // stopped during the start: what failed was ended by the stop
		}
		log.Error().Err(err).Msg("streams-group coordinator")
		return 1
	}
	defer streams.close()
	if ctx.Err() != nil {
		return 0 // stopped while waiting for the first partitions
	}
	p.Starting("starting the listeners")
	groupMetrics.Bind(streams.coord, statusEvents)
	sopts := status.Options{Coordinator: streams.coord, Events: statusEvents, FlightRecorders: flightRecorders(rec),
		EndOffsets: changelogEndOffsets(streams.ctl), Upstream: statusUpstream{streams.ctl}}
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

// serveTweak adjusts what serve builds: the proxy's options (the demo's
// quieter connection lines) and, in tests, the cluster's hooks (its
// constructors' options).
type serveTweak struct {
	proxy   func(*proxy.Options)
	links   func(*cluster.LinkOptions)
	cluster func(*cluster.Options)
}

// withCluster adds /cluster (the instances, the owners of the group-log
// partitions, this instance's load states) to the admin endpoints; 404
// without the durable log.
func withCluster(admin http.Handler, view *atomic.Pointer[cluster.Runtime]) http.Handler {
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
		MaxAnswerBytes:      cfg.Limits.MaxAnswerBytes,
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
