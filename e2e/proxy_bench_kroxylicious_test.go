//go:build e2e

package e2e_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/streamshift/streamshift/e2e/harness"
)

// kroxyliciousHeap is the Kroxylicious JVM's heap: the broker's own
// (e2e/bin/broker.sh), fixed (-Xms = -Xmx) so heap growth is not part of a
// round. Netty's pooled direct buffers come on top, capped by the JVM at the
// same size. Kroxylicious' container image leaves the heap to the JVM's
// default (a quarter of RAM, 6 GiB here), which would only flatter its GC.
const kroxyliciousHeap = "512m"

// startBenchKroxylicious runs Kroxylicious 0.12 (e2e/kroxylicious, built by
// make e2e-build) in front of upstream: passthrough, no filters, one port per
// node (portIdentifiesNode: bootstrap on the first port, node id n on the
// first port + 1 + n, node ids 0..3 as streamshift's --node-id-max 3). The
// process is the JVM itself, so its /proc CPU and RSS are Kroxylicious'.
func startBenchKroxylicious(t *testing.T, out, name, upstream string) *benchProxy {
	t.Helper()
	if err := harness.CheckBuilt("kroxylicious"); err != nil {
		t.Fatal(err)
	}
	port := freeRange(t, 5)
	cfg := fmt.Sprintf(`virtualClusters:
  - name: bench
    targetCluster:
      bootstrapServers: %s
    gateways:
      - name: default
        portIdentifiesNode:
          bootstrapAddress: 127.0.0.1:%d
          nodeIdRanges:
            - name: brokers
              start: 0
              end: 3
`, upstream, port)
	cfgFile := filepath.Join(out, name+".yaml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(out, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	java := "java"
	if h := os.Getenv("JAVA_HOME"); h != "" {
		java = filepath.Join(h, "bin", "java")
	}
	bp := &benchProxy{addr: "127.0.0.1:" + strconv.Itoa(port), log: logf}
	bp.cmd = exec.Command(java, "-Xms"+kroxyliciousHeap, "-Xmx"+kroxyliciousHeap, "-XX:+UseG1GC",
		"-cp", filepath.Join(harness.Root(), "kroxylicious", "target", "lib", "*"),
		"io.streamshift.e2e.kroxylicious.Launch", cfgFile)
	bp.start(t)
	return bp
}
