// Package peer is the wire between streamshift instances
// (docs/one-address.md §3): what a call between instances carries and the
// link that carries it. A request travels in a Kafka EnvelopeRequest
// (KIP-590) whose principal is a ConnPrincipal (principal.go): the client
// connection the request came from, what the origin routed it by, and the
// kind of call (CallKind). A Link (link.go; Links, links.go: one to every
// other instance of the map) dials another instance's internal Listener
// (listener.go) and carries calls of every kind, answered out of order;
// each kind has its own budget on both ends (budget.go), links
// authenticate with the control plane's SASL credentials (link_auth.go,
// listener_auth.go), and a call that gets no answer fails with an Error
// (error.go). Workers (workers.go) run the serve calls' interceptors at
// the owner.
//
// It owns the bytes of a call, the links and the pool that runs a call,
// never a client connection: it imports no gnet and nothing of proxy
// (imports_test.go), so it can be read, fuzzed and versioned on its own.
// Plain net and crypto/tls: a link's reader may block. What a call does
// is given in: the handlers (ListenerOptions.Handlers; proxy's
// PeerHandlers run them on its interceptors and client connections), the
// upstream dial of a link's authentication (Auth.Dial, proxy's PeerAuth)
// and the TLS configurations (proxy's PeerDialTLS and PeerListenTLS, built
// from the client listeners' files).
package peer
