// Package cluster is "one address" at run time: this instance's part in
// the cluster of instances that share the durable group log
// (docs/one-address.md).
//
// It owns the runtime (runtime.go): the instance group's assignment turned
// into loads and unloads of group-log partitions (acquire the writer,
// replay, serve; fenced or revoked: unload, let the anchors go), the
// answers the routes ask of it as their route.Cluster (Owner, Serving,
// Hops, Coordinator, Peers, Forward, ServedGroups), and the owner's check
// of every serve call before any handling (admitServe). It owns the
// links' lifecycle (links.go: the internal listener bound first, a link to
// every instance of the latest map), the cluster metrics (metrics.go) and
// /cluster (view.go).
//
// What it may not touch: the wire. The link transport (Envelope framing,
// budgets, SASL and TLS of the links) is proxy/peer's, with what the
// links take of the proxy (their handlers, TLS and upstream dial) built by
// proxy; the routing of a
// request (which key names which group, what a refusal answers) is
// route's; the partitions' groups and their state are the coordinator's;
// the instance group and the log are upstream's. Only cmd/streamshift
// imports this package (imports_test.go): it builds the links and the
// runtime from the configuration, and hands the runtime to route as its
// Cluster. Tests reach the runtime through constructor options
// (Options.ServeCheck, LinkOptions.Listening), never package variables.
package cluster
