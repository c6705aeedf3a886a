// Package proxy is streamshift's Kafka wire-protocol proxy: listeners,
// framing, forwarding on gnet, address rewriting, ApiVersions, response
// ordering, and the routing of locally served APIs to registered interceptors.
// It also holds the adapters that carry a client's request between
// instances (remote.go, 58_envelope.go, served_groups.go,
// peer_conn_closed.go) and what the links take from its listeners and
// upstream (peer_tls.go, peer_auth.go); the link transport and the bytes
// of a call are package peer's.
//
// It owns the connections, their buffers and budgets, and nothing of a
// group: which key is served and how is the registered interceptor's
// (package route), and it imports no coordinator, route, cluster, upstream
// or migration (imports_test.go), so the data path never waits on a
// group's state except through an interceptor it was handed.
//
// # TLS
//
// gnet has no TLS and will not get it (gnet#749), so TLS is done here, on
// both sides: the client listeners (tls.*) and the upstream connections
// (upstream-tls.*), each side on its own, so the bytes are decrypted and
// encrypted again in the proxy, which must read the frames anyway.
//
// The design keeps one data path. A TLS connection is a tlsConn: a
// gnet.Conn whose Peek, Discard, InboundBuffered and Write work on
// plaintext, so conn.go's request and response paths run unchanged on
// either kind of connection, and a plaintext connection is the bare gnet
// connection as before (no extra copy, no extra branch beyond one type
// assertion per OnTraffic in handler.go). After the handshake everything
// stays on the connection's loop: OnTraffic first decrypts what gnet read
// (tlsConn.pump: crypto/tls reads through tlsTransport, which drains gnet's
// inbound buffer and answers "would block", a temporary net.Error after
// which crypto/tls keeps a partial record buffered), and Write seals
// records that go straight to gnet.
//
// Only the handshake leaves the loop: crypto/tls cannot resume a handshake
// that ran out of bytes (its error is sticky), so a client handshake runs
// on a goroutine of its own that blocks on the bytes the loop hands it
// (tlsTransport.feed) and writes through AsyncWrite, and an upstream
// handshake runs on the dialling goroutine on the dialled socket before
// gnet enrolls it. The handshake bounds what hostile clients cost: at most
// tls.max-handshakes run at once (more connections are closed at once),
// each with one goroutine, one tls.Conn and at most 64 KiB of input held for
// it (more waits in gnet's buffer, bounded as a plaintext connection's is),
// for at most tls.handshake-timeout; the upstream is dialled only after
// the client's handshake succeeded. A failed handshake is logged with a
// cause (not-tls, bad-certificate, expired, timeout, …) and a hint.
//
// The alternatives measured against: a goroutine per TLS connection (a
// crypto/tls.Conn on the socket, plaintext handed to the loop over a
// socketpair or Execute) costs a goroutine and a stack per connection
// and one more copy and a cross-thread hand-off per read; the forks of
// crypto/tls that resume a handshake (gnet PR #565, gnet-io/tls, nbio's)
// are unmaintained. What this design costs over a Go forwarder using
// crypto/tls on both sides: one more copy per direction (gnet reads the
// socket into its buffer before crypto/tls copies the record out) and,
// as in plaintext, gnet's outbound buffering when a socket is full. The
// numbers are in BENCHMARKS.md (TLS route). In memory, an open TLS
// connection holds crypto/tls's record buffer; the plaintext buffer and the
// staging buffer of sealed records come from pools and go back when
// drained, except a producer's large plaintext buffer (kept up to 8 MiB:
// reallocating it per request cost a third more CPU).
//
// Listener certificates are reloaded when their files change
// (tls_files.go: checked at most once a second, on a handshake);
// the upstream configuration is built once at start (config/security.go).
package proxy
