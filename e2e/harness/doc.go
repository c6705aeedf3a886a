// Package harness drives the real-Kafka end-to-end suite: Apache Kafka brokers and Kafka
// Streams test apps built by Maven from e2e/pom.xml (see e2e/bin for the scripts it runs),
// a steady-rate input producer, an output collector, the exactness verifier, and the
// scenario runner that reports per-step rebalance timings.
//
// The library builds without tags so its pure parts have ordinary unit tests; the tests that
// start JVMs live behind the `e2e` build tag (e2e/scenarios), so `go test ./...` stays fast.
//
// The address apps connect to is a parameter of every scenario (Scenario.Route): the same
// scenarios run directly against a broker (the baselines) and through the streamshift proxy.
//
// It owns the test processes (brokers, apps, tools) and their files; it drives streamshift
// only as a client and an operator would (its listeners, config and admin routes), never
// through its packages' internals.
package harness
