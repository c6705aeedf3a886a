package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/streamshift/streamshift/config"
	"github.com/streamshift/streamshift/proxy"
)

const demoUsage = `usage: streamshift demo [--produce TOPIC] [flags of streamshift run, except --upstream]

Runs streamshift in front of an embedded, in-process Kafka cluster (franz-go's
kfake, 3 brokers on loopback ports it picks): nothing else is needed. The
cluster keeps everything in memory, nothing on disk: every topic, record and
group is gone when the demo stops.

The cluster plays Kafka 3.9 (kfake.MaxVersions(kversion.V3_9_0())), which has
no streams groups: streamshift's own coordinator serves group.protocol=streams,
as it does in front of a real 3.9 cluster.

Like a broker with its defaults, it creates a topic on first use
(auto.create.topics.enable, num.partitions=1), so a Kafka Streams app's output
topic appears; Kafka's Java admin, CLI tools and Kafka Streams apps of both
protocols work against it. Logs are console lines (--log-format json for JSON);
client connects and disconnects are logged at debug (--log-level debug).

  --produce TOPIC   create TOPIC (3 partitions) if missing and keep a small
                    input stream going through streamshift until stopped: a few
                    records a second, key a word, value a line of words (for a
                    Kafka Streams word-count or count app)

Every flag, STREAMSHIFT_* variable and --config key of 'streamshift run'
applies (see streamshift run --help-all), the listener flags included:
  --listen (127.0.0.1:19092)  --advertised-host  --node-port-base (listen port + 1)
  --admin-listen (127.0.0.1:19080)
and the streams (streams.*, coordinator.*) and migration (migration.*)
settings. Only upstream is the demo's own: the embedded cluster.

SIGINT (Ctrl-C) or SIGTERM stops it: the proxy drains, the coordinator closes,
the cluster goes away.
`

// demoCmd is `streamshift demo`: `run`'s wiring (serve) in front of an
// embedded kfake cluster.
func demoCmd(args []string) int {
	rest, topic, err := demoArgs(args)
	if errors.Is(err, errDemoHelp) {
		fmt.Print(demoUsage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "streamshift demo: %v\n\n%s", err, demoUsage)
		return 2
	}
	usage := func(w io.Writer) { fmt.Fprint(w, demoUsage) }
	// A bad flag or value is reported before the embedded cluster starts
	// (its upstream stands in for the cluster's, not yet known).
	if _, _, err := config.Load(append([]string{"--upstream", "127.0.0.1:9092"}, rest...), os.Environ(), os.Stdout); err != nil {
		if errors.Is(err, flag.ErrHelp) { // --help-all
			return 0
		}
		printConfigError(os.Stderr, "demo", err, usage)
		return 2
	}
	cluster, err := newDemoCluster()
	if err != nil {
		fmt.Fprintf(os.Stderr, "streamshift demo: embedded cluster: %v\n", err)
		return 1
	}
	defer cluster.Close() // last: after the proxy drained and the coordinator closed
	cfg, log, code := loadConfig("demo", append([]string{"--upstream", strings.Join(cluster.ListenAddrs(), ",")}, demoLogFormat(rest, os.LookupEnv)...), usage)
	if cfg == nil {
		return code
	}
	if _, set := os.LookupEnv("STREAMSHIFT_COORDINATOR_DURABLE_LOG"); !set {
		// The embedded cluster is in memory: so is the demo's group log,
		// unless asked for.
		cfg.Coordinator.DurableLog = false
	}
	log.Info().Strs("brokers", cluster.ListenAddrs()).Msg("embedded cluster (kfake, in memory, playing Kafka 3.9) started")

	ctx, stop := onStopSignal(context.Background())
	defer stop()
	bootstrap := clientAddr(cfg.Listen, cfg.AdvertisedHost)
	code = serve(ctx, cfg, log, func(ctx context.Context, admin string) {
		printDemoBanner(os.Stdout, bootstrap, admin, cfg.AdvertisedHost, topic)
		if topic != "" {
			produceInput(ctx, bootstrap, topic, log)
		}
	}, serveTweak{proxy: func(o *proxy.Options) {
		// A line per client connection would bury the banner and the
		// lines that matter (takeovers, hand-backs); --log-level debug
		// shows them.
		o.ConnLogDebug = true
	}})
	fmt.Println("streamshift demo: stopped; the embedded cluster and everything in it are gone.")
	return code
}

var errDemoHelp = errors.New("help")

// demoLogFormat makes the demo's logs console lines unless the user chose a
// format (--log-format, STREAMSHIFT_LOG_FORMAT): the demo runs in a
// terminal, its logs under its banner, where JSON lines read badly.
func demoLogFormat(args []string, lookupEnv func(string) (string, bool)) []string {
	if _, set := lookupEnv("STREAMSHIFT_LOG_FORMAT"); set {
		return args
	}
	for _, a := range args {
		if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && name == "log-format" {
			return args
		}
	}
	return append([]string{"--log-format", "console"}, args...)
}

// demoArgs takes the demo's own flag (--produce TOPIC) out of args; the rest
// are run's flags. --upstream is refused: the demo is its own upstream.
func demoArgs(args []string) (rest []string, topic string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(rest, args[i:]...), topic, nil
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") {
			rest = append(rest, a)
			continue
		}
		switch name {
		case "h", "help":
			return nil, "", errDemoHelp
		case "upstream":
			return nil, "", errors.New("--upstream: the demo runs its own embedded cluster (use streamshift run --upstream for a real one)")
		case "produce":
			if !hasValue {
				if i+1 == len(args) {
					return nil, "", errors.New("--produce needs a topic")
				}
				i++
				value = args[i]
			}
			if value == "" {
				return nil, "", errors.New("--produce needs a topic")
			}
			topic = value
		default:
			rest = append(rest, a)
		}
	}
	return rest, topic, nil
}

// clientAddr is the address clients use for a listener: its port on the
// advertised host, else on its own host.
func clientAddr(listen, advertised string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	if advertised != "" {
		host = advertised
	}
	return net.JoinHostPort(host, port)
}

// printDemoBanner says plainly what runs and what to run against it.
func printDemoBanner(w io.Writer, bootstrap, admin, advertised, topic string) {
	t := topic
	if t == "" {
		t = "words"
	}
	rule := strings.Repeat("─", 78)
	fmt.Fprintf(w, "\n%s", rule)
	fmt.Fprintf(w, `
streamshift demo: streamshift in front of an embedded 3-broker Kafka cluster
(kfake, in this process, playing Kafka 3.9: streams groups are served by streamshift).

  bootstrap  %s
  admin      %s
  storage    none: the embedded cluster keeps nothing on disk; everything is gone on exit.

Try it:
  kcat -b %[1]s -L
  echo 'hello streams hello' | kcat -b %[1]s -t %[3]s -P
  kafka-console-producer.sh --bootstrap-server %[1]s --topic %[3]s
  Kafka Streams app: bootstrap.servers=%[1]s and group.protocol=streams

`, bootstrap, adminURL(admin, advertised), t)
	if topic != "" {
		fmt.Fprintf(w, "Producing to %q through streamshift (a few records a second: key a word, value a line of words) until stopped.\n", topic)
	}
	fmt.Fprintln(w, "Ctrl-C or SIGTERM stops it. Its log follows (stderr).")
	fmt.Fprintf(w, "%s\n\n", rule)
}

// adminURL is the admin listener's URL, or says it is off.
func adminURL(admin, advertised string) string {
	if admin == "" {
		return "off (--admin-listen is empty)"
	}
	host, port, _ := net.SplitHostPort(admin)
	if ip := net.ParseIP(host); (ip == nil || ip.IsUnspecified()) && advertised != "" {
		host = advertised
	}
	return "http://" + net.JoinHostPort(host, port) + "  (/ui: the groups; /healthz /readyz /metrics /api/groups)"
}
