package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/rs/zerolog"

	"github.com/streamshift/streamshift/config"
	"github.com/streamshift/streamshift/proxy"
)

// runCmd is `streamshift run`: the proxy in front of the upstream cluster.
func runCmd(args []string) int {
	cfg, warnings, err := config.Load(args, os.Environ(), os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "streamshift run: %v\n", err)
		return 2
	}
	log := newLogger(cfg.Log)
	for _, w := range warnings {
		log.Warn().Msg(w)
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	p, err := proxy.New(proxyOptions(cfg, log, reg))
	if err != nil {
		log.Error().Err(err).Msg("invalid proxy configuration")
		return 2
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	if cfg.AdminListen != "" {
		ln, err := net.Listen("tcp", cfg.AdminListen)
		if err != nil {
			log.Error().Err(err).Str("admin_listen", cfg.AdminListen).Msg("admin listener")
			return 1
		}
		srv := &http.Server{Handler: p.AdminHandler(reg), ReadHeaderTimeout: 5 * time.Second}
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
		log.Info().Str("admin_listen", ln.Addr().String()).Msg("admin endpoints: /healthz /readyz /metrics")
	}

	streams, err := startStreams(ctx, cfg, p, log)
	if err != nil {
		log.Error().Err(err).Msg("streams-group coordinator")
		return 1
	}
	defer streams.close()

	if err := p.Run(ctx); err != nil {
		log.Error().Err(err).Msg("proxy failed")
		return 1
	}
	return 0
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
		ShutdownTimeout:     cfg.ShutdownTimeout,
		MetadataRefresh:     cfg.MetadataRefreshInterval,
		EventLoops:          cfg.EventLoops,
		ControlPlane:        controlPlaneOpts(cfg),
		Log:                 log,
		Metrics:             reg,
	}
}

func newLogger(c config.Log) zerolog.Logger {
	level, _ := zerolog.ParseLevel(c.Level) // validated by config
	var log zerolog.Logger
	if c.Format == "console" {
		log = zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr, TimeFormat: time.RFC3339})
	} else {
		log = zerolog.New(os.Stderr)
	}
	return log.Level(level).With().Timestamp().Logger()
}
