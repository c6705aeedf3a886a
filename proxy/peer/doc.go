// Package peer is the wire between streamshift instances
// (docs/one-address.md §3): what a call between instances carries. A
// request travels in a Kafka EnvelopeRequest (KIP-590) whose principal is
// a ConnPrincipal (principal.go): the client connection the request came
// from, what the origin routed it by, and the kind of call (CallKind).
// Workers (workers.go) run the serve calls' interceptors at the owner.
//
// It owns the bytes of a call and the pool that runs it, never a
// connection: it imports no gnet and nothing of proxy (imports_test.go),
// so it can be read, fuzzed and versioned on its own. The link transport
// (the links, the internal listener, their budgets, SASL and TLS) is
// still in proxy (peer_link.go, peer_listener.go, peer_auth.go); it moves
// here next (issue #40), with the frame helpers it shares with proxy in
// an internal package, and proxy keeps the adapters that need its client
// connections (remote.go, 58_envelope.go, served_groups.go,
// peer_conn_closed.go).
package peer
