// Command streamshift is a Kafka wire-protocol proxy that serves the KIP-1071
// streams rebalance protocol in front of an unmodified Kafka cluster.
//
// The command owns the wiring only: it reads the configuration, builds
// every package's pieces (the proxy, the routes, the coordinator, the
// upstream clients, package cluster's runtime and links, the capture, the
// status page) and hands each the others through their options; the
// logic of a request or a group is never here, and tests reach the
// pieces through their constructors' options, not package variables.
package main

import (
	"fmt"
	"os"
)

const usage = `usage: streamshift <command> [flags]

commands:
  run       run the proxy (see: streamshift run --help)
  demo      run it in front of an embedded in-memory Kafka cluster, nothing else needed (see: streamshift demo --help)
  acls      the kafka-acls commands streamshift's own principal needs (see: streamshift acls --help)
  inspect   decode captured Kafka Streams rebalance metadata (see: streamshift inspect --help)
  timeline  a group's history from capture files, as text or HTML (see: streamshift timeline --help)
  config    print the configuration reference: streamshift config reference [--markdown]
  version   print the version and commit of this build (also: --version)
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	switch os.Args[1] {
	case "run":
		os.Exit(runCmd(os.Args[2:]))
	case "demo":
		os.Exit(demoCmd(os.Args[2:]))
	case "acls":
		os.Exit(aclsCmd(os.Args[2:]))
	case "inspect":
		os.Exit(inspectCmd(os.Args[2:]))
	case "config":
		os.Exit(configCmd(os.Args[2:], os.Stdout, os.Stderr))
	case "timeline":
		os.Exit(runTimeline(os.Args[2:], os.Stdout, os.Stderr))
	case "version", "--version", "-version":
		printVersion(os.Stdout)
	case "-h", "--help", "help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "streamshift: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
}
