// Package config loads streamshift's configuration once at start: defaults,
// then a YAML file (--config), then STREAMSHIFT_* environment variables, then
// flags, each overriding the one before; then validates it with messages that
// name the offending key.
//
// It owns the keys, their defaults and their validation, nothing that
// runs: it starts no goroutine and opens no connection (it reads files
// only: the YAML and the TLS stores it checks), and what a key does is
// the package that takes its value (cmd/streamshift hands each over).
package config

import (
	"crypto/tls"
	"time"
)

// Config is the configuration of `streamshift run`. The koanf tag of a field is
// its YAML key; nested structs are YAML sections. The environment variable of
// a key is STREAMSHIFT_ + the key upper-cased with "." and "-" as "_"
// (log.level -> STREAMSHIFT_LOG_LEVEL).
type Config struct {
	// Upstream is the bootstrap list of the real cluster.
	Upstream []string `koanf:"upstream"`
	// UpstreamConfig is a Kafka client properties file for the
	// connections to the brokers (upstream_properties.go).
	UpstreamConfig string              `koanf:"upstream-config"`
	upstreamProps  *upstreamProperties // read by Validate
	// Listen is the proxy's bootstrap listener.
	Listen string `koanf:"listen"`
	// AdvertisedHost is the host clients are told for every node.
	AdvertisedHost string `koanf:"advertised-host"`
	// NodePortBase: upstream node N is served on NodePortBase+N (0: listen
	// port + 1).
	NodePortBase int `koanf:"node-port-base"`
	// NodeIDMin..NodeIDMax are the node ids that get a port.
	NodeIDMin int32 `koanf:"node-id-min"`
	NodeIDMax int32 `koanf:"node-id-max"`
	// AdminListen serves /healthz, /readyz and /metrics; empty disables it.
	AdminListen string `koanf:"admin-listen"`
	// Admin locks the admin listener's changes and profiles (admin.go).
	Admin Admin `koanf:"admin"`

	UpstreamDialTimeout     time.Duration `koanf:"upstream-dial-timeout"`
	MetadataRefreshInterval time.Duration `koanf:"metadata-refresh-interval"`
	ShutdownTimeout         time.Duration `koanf:"shutdown-timeout"`
	// EventLoops is the number of gnet event loops (0: one per CPU).
	EventLoops int `koanf:"event-loops"`

	Limits Limits `koanf:"limits"`
	Log    Log    `koanf:"log"`

	// TLS and UpstreamTLS are the two encrypted sides (security.go).
	TLS            TLS         `koanf:"tls"`
	UpstreamTLS    UpstreamTLS `koanf:"upstream-tls"`
	upstreamTLS    *tls.Config // built by Validate
	upstreamTLSLog *reloadLog  // hears of its files' reloads
	// Authorization applies the broker's ACLs to served requests
	// (authorization.go).
	Authorization Authorization `koanf:"authorization"`

	// ProxyID names this instance upstream: its anchor members join with
	// group.instance.id "streamshift-<proxy-id>". Keep it stable across
	// restarts; give every instance its own.
	ProxyID      string       `koanf:"proxy-id"`
	ControlPlane ControlPlane `koanf:"control-plane"`
	Coordinator  Coordinator  `koanf:"coordinator"`
	// Cluster is the instances' internal listener and links (cluster.go).
	Cluster Cluster `koanf:"cluster"`

	// Streams holds the streams-group settings. Its keys are Kafka's own
	// flat names under `streams:` (streams.session.timeout.ms), so it is
	// loaded separately, with flat paths.
	Streams Streams `koanf:"-"`
	// Migration is the online migration policy (migration.go).
	Migration Migration `koanf:"migration"`
	// Capture is traffic capture for debugging migrations (capture.go).
	Capture Capture `koanf:"capture"`
}

// Limits bound the proxy's memory, per connection and in all.
type Limits struct {
	// MaxFrameBytes caps a request (Kafka's socket.request.max.bytes).
	MaxFrameBytes int `koanf:"max-frame-bytes"`
	// MaxInterceptedBytes caps a request the proxy decodes for local handling.
	MaxInterceptedBytes int `koanf:"max-intercepted-bytes"`
	// MaxInflightRequests caps forwarded requests awaiting a response, per
	// client connection.
	MaxInflightRequests int `koanf:"max-inflight-requests"`
	// BufferHighWaterBytes: a connection whose unsent bytes pass it stops
	// feeding more until they drain.
	BufferHighWaterBytes int `koanf:"buffer-high-water-bytes"`

	// MaxConnections caps client connections (Kafka's max.connections);
	// 0: what the descriptor limit leaves (proxy.Options.MaxConnections).
	MaxConnections int `koanf:"max-connections"`
	// MaxConnectionsPerIP caps client connections from one IP address
	// (Kafka's max.connections.per.ip); 0: no limit.
	MaxConnectionsPerIP int `koanf:"max-connections-per-ip"`
	// RequestTimeout: a request whose bytes have not all arrived within it
	// closes the connection.
	RequestTimeout time.Duration `koanf:"request-timeout"`
	// ConnectionsMaxIdle: a connection with no request and nothing in
	// flight for that long is closed (Kafka's connections.max.idle.ms).
	ConnectionsMaxIdle time.Duration `koanf:"connections-max-idle"`
	// MaxBufferedBytes bounds the request and response bytes held across
	// all client connections (Kafka's queued.max.request.bytes).
	MaxBufferedBytes int `koanf:"max-buffered-bytes"`
	// MaxAnswerBytes caps one answer streamshift builds itself (a describe
	// naming a group many times): a larger one closes the connection.
	// Above MaxBufferedBytes it is lowered to it (proxy.Options).
	MaxAnswerBytes int `koanf:"max-answer-bytes"`
}

// Log configures zerolog.
type Log struct {
	// Level: trace, debug, info, warn, error.
	Level string `koanf:"level"`
	// Format: json or console.
	Format string `koanf:"format"`
}

// Default returns the configuration before any source is applied.
func Default() Config {
	return Config{
		Listen:                  "127.0.0.1:19092",
		NodeIDMin:               0,
		NodeIDMax:               31,
		AdminListen:             "127.0.0.1:19080",
		UpstreamDialTimeout:     5 * time.Second,
		MetadataRefreshInterval: time.Minute,
		ShutdownTimeout:         30 * time.Second,
		Limits: Limits{
			MaxFrameBytes:        100 << 20,
			MaxInterceptedBytes:  8 << 20,
			MaxInflightRequests:  256,
			BufferHighWaterBytes: 4 << 20,
			RequestTimeout:       30 * time.Second,
			ConnectionsMaxIdle:   10 * time.Minute,
			MaxBufferedBytes:     256 << 20,
			MaxAnswerBytes:       64 << 20,
		},
		Log:           Log{Level: "info", Format: "json"},
		TLS:           defaultTLS(),
		Authorization: DefaultAuthorization(),
		Streams:       DefaultStreams(),
		ProxyID:       "0",
		Coordinator:   DefaultCoordinator(),
		Cluster:       DefaultCluster(),
		Migration:     DefaultMigration(),
		Capture:       DefaultCapture(),
	}
}
