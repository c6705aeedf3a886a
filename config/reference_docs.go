package config

// keyDoc documents one configuration key: the README's configuration
// tables and `streamshift run -h` are made from these (Reference, flag
// usage), so the text lives here once. The key itself comes from the
// koanf tags of Config, its default from Default().
type keyDoc struct {
	key string
	// section is the README table the key is listed in.
	section string
	// meaning says what the key does, in the README's words.
	meaning string
	// shownDefault replaces the default the README shows when the zero
	// value stands for something computed ("listen port + 1").
	shownDefault string
}

// The README's configuration tables, in order.
const (
	sectionProxy     = "proxy"
	sectionStreams   = "streams"
	sectionMigration = "migration"
	sectionSecurity  = "security"
	sectionCapture   = "capture"
	sectionAdmin     = "admin"
)

// keyDocs is in README order.
var keyDocs = []keyDoc{
	{"upstream", sectionProxy, "upstream bootstrap, host:port[,…] (YAML: a list)", "(required)"},
	{"upstream-config", sectionProxy, "a Kafka client properties file, as Kafka's tools take with --command-config (bootstrap.servers, security.protocol, ssl.truststore.*, ssl.keystore.*, ssl.endpoint.identification.algorithm, sasl.mechanism, sasl.jaas.config: docs/upstream-config.md): the security of every connection streamshift opens to the brokers (control plane; the clients' forwarded connections get its TLS, their SASL stays their own); upstream, if set, wins over its bootstrap.servers; upstream-tls.* and control-plane.sasl-* may not be set with it. Unknown keys are warned about, one each; where a key is Kafka's, so is its unit (*.ms: milliseconds), here and in streams.*", "none"},
	{"listen", sectionProxy, "the proxy's bootstrap listener", ""},
	{"advertised-host", sectionProxy, "host clients are told for every broker (required if listen is 0.0.0.0)", "listen host"},
	{"node-port-base", sectionProxy, "upstream node N is served on base+N, the same on every instance", "listen port + 1"},
	{"node-id-min", sectionProxy, "lowest upstream node id given a pre-bound port; a node outside the range is an error, never a bypass", ""},
	{"node-id-max", sectionProxy, "highest upstream node id given a pre-bound port", ""},
	{"admin-listen", sectionProxy, "admin HTTP (/healthz, /readyz, /metrics); empty turns it off", ""},
	{"upstream-dial-timeout", sectionProxy, "timeout of one upstream dial", ""},
	{"metadata-refresh-interval", sectionProxy, "refresh of the upstream broker list", ""},
	{"shutdown-timeout", sectionProxy, "drain of in-flight requests on SIGTERM/SIGINT", ""},
	{"event-loops", sectionProxy, "gnet event loops", "0 (one per CPU)"},
	{"limits.max-frame-bytes", sectionProxy, "largest request (Kafka's socket.request.max.bytes)", ""},
	{"limits.max-intercepted-bytes", sectionProxy, "largest request decoded for local handling (intercepted keys, ApiVersions); a larger one is refused from its size prefix by closing the connection", ""},
	{"limits.max-inflight-requests", sectionProxy, "forwarded requests awaiting a response, per connection", ""},
	{"limits.max-connections", sectionProxy, "client connections at once (Kafka's max.connections); one beyond is accepted and closed at once (streamshift_connections_refused_total); a value above what RLIMIT_NOFILE (raised to its hard limit at start) leaves is lowered to it with a warning", "0: (RLIMIT_NOFILE − 256 − listeners − min(net.core.somaxconn, RLIMIT_NOFILE/4)) / 2"},
	{"limits.max-connections-per-ip", sectionProxy, "client connections at once from one IP address (Kafka's max.connections.per.ip), refused the same way", "0 (no limit)"},
	{"limits.request-timeout", sectionProxy, "a request whose bytes have not all arrived within it closes the connection (streamshift_connections_timed_out_total)", ""},
	{"limits.connections-max-idle", sectionProxy, "a client connection with no request and nothing in flight for that long is closed (Kafka's connections.max.idle.ms)", ""},
	{"limits.buffer-high-water-bytes", sectionProxy, "a client's unsent responses before its requests stop being forwarded (answers to requests already forwarded still arrive: at most max-inflight-requests of them, 2 Fetch); the request bytes held for one connection (unread input and requests waiting for the upstream socket) are capped at max-frame-bytes + 2× this, then the client is disconnected", ""},
	{"limits.max-buffered-bytes", sectionProxy, "request and response bytes held across all client connections (Kafka's queued.max.request.bytes): above half of it a connection whose unsent responses and forwarded requests pass its share (this / connections) gets no new request forwarded until they drain; past it a connection above its share is closed by the read that brought the total there, and so is the one holding the most", ""},
	{"limits.max-answer-bytes", sectionProxy, "largest answer streamshift builds itself (StreamsGroupDescribe, DescribeGroups, DescribeConfigs of served groups, OffsetFetch and ListGroups it merges): estimated before it is built (each distinct group described once, its encoding repeated per mention); a larger one, or one past the connection's share of an exhausted max-buffered-bytes, closes the connection (streamshift_frames_rejected_total{reason=\"answer-too-large\"}); a value above max-buffered-bytes is lowered to it", ""},
	{"log.level", sectionProxy, "trace, debug, info, warn, error", ""},
	{"log.format", sectionProxy, "json or console", ""},

	{"proxy-id", sectionStreams, "stable and unique per instance (the instances' upstream group refuses a duplicate); without the durable log anchors join as group.instance.id=streamshift-<proxy-id>", ""},
	{"coordinator.metadata-refresh-interval", sectionStreams, "refresh of source-topic partition counts (a change bumps the group epoch)", ""},
	{"coordinator.durable-log", sectionStreams, "keep group state on a compacted upstream topic, so a restart keeps every member and task and several instances share the groups (Several instances); false: in memory (tests; streamshift demo unless STREAMSHIFT_COORDINATOR_DURABLE_LOG is set)", ""},
	{"coordinator.log-topic", sectionStreams, "that topic", ""},
	{"coordinator.log-partitions", sectionStreams, "its partition count, fixed once the topic exists (a different value is a startup error); a group lives on partition abs(groupId.hashCode()) % log-partitions (Java's String.hashCode, Kafka's rule for __consumer_offsets)", ""},
	{"coordinator.cluster-id", sectionStreams, "instances with the same log topic and cluster id form one cluster: they join the upstream group __streamshift_cluster_<cluster-id>; anchors join as group.instance.id=streamshift-<cluster-id>", ""},
	{"coordinator.instance-session-timeout", sectionStreams, "an instance's session in that group: how long a dead instance's groups wait before another instance takes them (at least the broker's group.min.session.timeout.ms, 6s by default)", ""},
	{"coordinator.anchor-session-timeout", sectionStreams, "session timeout of the anchor members; falls back to 5m, 45s, 10s if the broker's group.max.session.timeout.ms refuses it", ""},
	{"coordinator.anchor-heartbeat-interval", sectionStreams, "heartbeat interval of the anchor members", ""},
	{"coordinator.anchor-rebalance-timeout", sectionStreams, "rebalance timeout of the anchor members", ""},
	{"coordinator.anchor-max-inflight", sectionStreams, "the anchor members' heartbeats running at once, and their joins (a lane of their own, so slow upstream rebalances never hold up heartbeats); an idle anchor holds no goroutine, one scheduler starts these as short tasks", ""},
	{"coordinator.offsets-retention-check-interval", sectionStreams, "how long a streams group stays Empty before its state is deleted (tombstoned in the group log) and its anchor member leaves the upstream group, whose own offset retention then applies (Kafka's offsets.retention.check.interval.ms); 0 keeps Empty groups", ""},
	{"cluster.listen", sectionStreams, "the internal listener the other instances' links connect to (several instances; started only with coordinator.durable-log): ApiVersions and Kafka Envelope (key 58) only, TLS as the listeners (tls.*); with control-plane.sasl-mechanism, links authenticate with it and only a principal that may READ the instance group is admitted; keep it off the load balancer. Port 0 lets the system pick a free port: the address bound is logged and published in the instance group, where the other instances find it; set a fixed port where network policies must name it", "listen host, port 0 (any free port)"},
	{"cluster.advertised-address", sectionStreams, "host:port the other instances dial for this one: its own pod DNS name or IP, never the load balancer; published in the instance group (/cluster)", "cluster.listen's host (the host name when it is empty or 0.0.0.0) and the port actually bound"},
	{"cluster.max-inflight-per-peer", sectionStreams, "calls of each kind (serve, upstream, served-groups) waiting on one other instance, and running for it; beyond, the client gets COORDINATOR_NOT_AVAILABLE at once (streamshift_cluster_forward_refused_total). A mass rebalance holds one JoinGroup per member", ""},
	{"cluster.max-peer-bytes", sectionStreams, "request bytes of those calls, per kind and instance, refused the same way", ""},
	{"cluster.forward-timeout", sectionStreams, "time limit of a call to another instance (below the clients' 30s request.timeout.ms); past it the client gets COORDINATOR_NOT_AVAILABLE and the call is not resent", ""},
	{"cluster.tls-ca-file", sectionStreams, "PEM CAs the other instances' listener certificates must chain to when tls.cert-file is set; with tls.client-auth request or require, the links present this instance's tls.cert-file (it needs the clientAuth key usage and must chain to tls.client-ca-file)", "system pool"},
	{"control-plane.sasl-mechanism", sectionStreams, "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512: streamshift's own credentials for metadata, CreateTopics, DescribeGroups, the anchors and the group log, for the proxy's own upstream client (broker list, readiness), and for the links between instances (Several instances); clients still authenticate as themselves", "none"},
	{"control-plane.sasl-username", sectionStreams, "the control plane's SASL user", ""},
	{"control-plane.sasl-password", sectionStreams, "its password", ""},

	{"migration.policy", sectionMigration, "disabled, upgrade (classic → streams only), downgrade (streams → classic only), bidirectional — as Kafka's group.consumer.migration.policy", ""},
	{"migration.group-policies", sectionMigration, "per-group override: group=policy,group=policy", "empty"},
	{"migration.disconnect.expiry.heartbeats", sectionMigration, "disconnect expiry, beyond Kafka: a dynamic member of a served group (either protocol) whose connection to streamshift closed and that sent no request since is fenced as if its session had expired, this many heartbeat intervals after the close (the group's interval for a streams member; for a classic member the largest gap seen between its heartbeats, at least 3 s), or at its session expiry if sooner; static members are exempt. A rolling step of a stateless app then costs a few heartbeats, not a session timeout. 0 turns it off", ""},

	{"tls.cert-file", sectionSecurity, "PEM server certificate (chain after it) of the bootstrap and node listeners; TLS 1.2+; re-read when the file changes (checked at most once a second)", "none (plaintext)"},
	{"tls.key-file", sectionSecurity, "its PEM key, re-read with it", ""},
	{"tls.keystore-location", sectionSecurity, "instead of tls.cert-file and tls.key-file: a keystore with the listeners' key and certificate chain (Kafka's ssl.keystore.location), re-read when it changes", "none"},
	{"tls.keystore-type", sectionSecurity, "JKS, PKCS12 or PEM (Kafka's ssl.keystore.type; a PKCS12 file named JKS or the reverse is read as what it is, as Java does)", ""},
	{"tls.keystore-password", sectionSecurity, "the keystore's password (Kafka's ssl.keystore.password)", ""},
	{"tls.key-password", sectionSecurity, "the key entry's password in a JKS keystore when it differs from the store's (Kafka's ssl.key.password)", "the keystore's"},
	{"tls.client-ca-file", sectionSecurity, "PEM CAs client certificates must chain to (mTLS); re-read when it changes", ""},
	{"tls.truststore-location", sectionSecurity, "instead of tls.client-ca-file: a truststore of the CAs client certificates must chain to (Kafka's ssl.truststore.location); re-read when it changes", "none"},
	{"tls.truststore-type", sectionSecurity, "JKS, PKCS12 or PEM (Kafka's ssl.truststore.type)", ""},
	{"tls.truststore-password", sectionSecurity, "its password (Kafka's ssl.truststore.password); without one a JKS store is read without its integrity check, as Java does", ""},
	{"tls.client-auth", sectionSecurity, "none, request (verified when sent) or require (needs tls.client-ca-file or tls.truststore-location)", ""},
	{"tls.handshake-timeout", sectionSecurity, "a client that has not finished its handshake by then is closed", ""},
	{"tls.max-handshakes", sectionSecurity, "client handshakes running at once; connections beyond are closed at once (streamshift_tls_handshakes_refused_total)", ""},
	{"upstream-tls.enabled", sectionSecurity, "TLS to the brokers: every forwarded connection and every control-plane client", ""},
	{"upstream-tls.ca-file", sectionSecurity, "PEM CAs of the brokers' certificates (read at start)", "system pool"},
	{"upstream-tls.cert-file", sectionSecurity, "client certificate for brokers with ssl.client.auth=required (streamshift's, on every connection: see Security); re-read when it changes", ""},
	{"upstream-tls.key-file", sectionSecurity, "its PEM key, re-read with it", ""},
	{"upstream-tls.server-name", sectionSecurity, "name checked in the brokers' certificates", "host dialled"},
	{"upstream-tls.insecure-skip-verify", sectionSecurity, "no certificate check (tests only; logged as a warning at start)", ""},
	{"authorization.cache-ttl", sectionSecurity, "how long the broker's answer to an authorization probe (one principal, resource and operation, shared by the principal's connections; per connection where streamshift cannot tell the principal; see Security) is reused, asked again in the background past half of it; an ACL change reaches the requests streamshift serves within it; 0 asks on every request", ""},
	{"authorization.per-connection", sectionSecurity, "keep authorization answers per client connection instead of per principal: set it when the broker's principal.builder.class does not make the principal User:<SASL user> of every SASL PLAIN and SCRAM connection (without SASL, every connection through streamshift has the one principal of its upstream connection)", ""},

	{"capture.file", sectionCapture, "JSON-lines capture file", "empty (off)"},
	{"capture.groups", sectionCapture, "comma-separated group ids; empty: every group", "empty"},
	{"capture.client-ids", sectionCapture, "comma-separated client ids; empty: every client", "empty"},
	{"capture.api-keys", sectionCapture, "API names or keys (JoinGroup,14); empty: the group APIs when capture.groups is set, else all", "empty"},
	{"capture.max-bytes", sectionCapture, "the file rotates past this; rotated files are gzipped", ""},
	{"capture.max-files", sectionCapture, "files kept, the live one included (the oldest are removed)", ""},
	{"capture.flight-window", sectionCapture, "what a group's flight recorder keeps", ""},
	{"capture.flight-max-bytes", sectionCapture, "bound of one flight recorder", ""},
	{"capture.flight-max-groups", sectionCapture, "flight recorders at once (memory: this × max-bytes)", ""},
	{"capture.flight-dir", sectionCapture, "where a flight recorder is written on a failure (see capture.flight-on-designed-fence): one file per incident (a group failing again and again is one incident until it succeeds or a quiet flight-window passes)", "the file's directory, else the temp dir"},
	{"capture.flight-max-files", sectionCapture, "flight-recorder files kept in flight-dir, an earlier run's included (the oldest are removed; instances sharing the directory share the cap)", ""},
	{"capture.flight-max-total-bytes", sectionCapture, "bytes of flight-recorder files kept in flight-dir, the same way; at least flight-max-bytes", ""},
	{"capture.flight-on-designed-fence", sectionCapture, "also write the flight recorder (logged at info) when a member is fenced by design: a disconnect expiry, a member replaced by identity, a session expiry of a member whose connection was closed (a stopped instance). Off, those are info lines of the coordinator only, and a file with its warning is for what an operator must act on: a failed takeover or hand-back, a rebalance, join or sync timeout, a session expiry with the connection open", ""},

	{"admin.auth-token-file", sectionAdmin, "file holding the admin listener's bearer token (surrounding whitespace dropped; re-read when it changes): with it, every request that changes something (POST, PUT, DELETE: /capture) and every /debug/pprof/ request needs Authorization: Bearer <token>, else 401; /healthz, /readyz, /metrics and the read-only pages stay open. An empty file is an error", "none (changes open)"},
	{"admin.pprof", sectionAdmin, "serve Go's profiles on /debug/pprof/ (404 when off; behind the token when admin.auth-token-file is set)", ""},
	{"admin.tls", sectionAdmin, "serve the admin listener over TLS with the listeners' certificate (tls.cert-file, tls.key-file; no client certificate asked, so probes work)", ""},
}

// docOf is the keyDoc of key.
func docOf(key string) (keyDoc, bool) {
	for _, d := range keyDocs {
		if d.key == key {
			return d, true
		}
	}
	return keyDoc{}, false
}

func meaningOf(key string) string {
	d, _ := docOf(key)
	return d.meaning
}
