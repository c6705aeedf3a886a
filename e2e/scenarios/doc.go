// Package scenarios holds the real-Kafka end-to-end scenarios. They start JVMs (brokers and
// Kafka Streams apps built by `make e2e-build`), so they only build with the `e2e` tag:
//
//	go test -tags e2e -timeout 30m ./e2e/...
//
// They own their scenarios only; the processes are the harness's.
package scenarios
