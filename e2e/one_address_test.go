//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/e2e/harness"
)

// oneAddress is the load balancer's address: every client's only
// bootstrap, and the host all three instances advertise.
const oneAddress = "127.0.0.10"

// needHAProxy returns the path of Debian's haproxy. Without it the test is
// skipped with the install hint, except under CI (.ci/run installs it),
// where a missing haproxy fails the test.
func needHAProxy(t *testing.T) string {
	t.Helper()
	path, err := harness.LookHAProxy()
	if err == nil {
		return path
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("haproxy is required under CI: %v", err)
	}
	t.Skip(err)
	return ""
}

// TestOneAddressMigration: three streamshift instances on Kafka 3.9 behind
// HAProxy (mode tcp, the README's configuration), all advertising
// HAProxy's address, which is every client's only bootstrap. Through it:
// Kafka's StreamsSmokeTest clients migrate online by the fast roll (issue
// #41): two kafka-streams 3.6 classic clients o1 and o2 are rolled one at a
// time to 4.4 streams clients s1 (its join takes the group over) and s2,
// then to 4.4 classic clients c3 and c4 (the hand-back), each successor on
// its predecessor's state directory, exactly once under continuous input.
// The instance owning the smoke group is killed -9 once, mid-takeover (at
// its "takeover ... starts" line), and brought back after that step; a
// Kafka Streams 4.4 app of its own on the streams protocol counts its
// input; a franz-go consumer group consumes a topic; Kafka's CLI tools
// describe the groups. kafka-streams 3.6 cannot bootstrap again
// (metadata.recovery.strategy came in 3.8): it reconnects to the addresses
// it knows, which HAProxy sends to a live instance.
//
// Asserted: the driver verifies every output (SUCCESS) and the 4.4 app
// counted every input record exactly once (its output read_committed
// through the one address); each step settles with every client RUNNING;
// no member of the smoke group is fenced at its session expiry (every
// stopped member is replaced by its successor); the franz-go members all
// consume again and the CLI answers name the expected members, the
// coordinator at the one address and the franz-go group's offsets; no
// client reaches ERROR, gets a fatal group error or closes a task dirty;
// the group ends as the broker's classic group of c3 and c4. Each step's
// time from the stop to a settled group, and how its predecessor left (the
// instances' "replaced by identity" lines, or a session expiry), are in the
// test's log; the times are measured, not asserted (a loaded machine).
func TestOneAddressMigration(t *testing.T) {
	t.Parallel()
	haproxy := needHAProxy(t)
	const group = "SmokeTest"
	// The test brokers' initial rebalance delay of 0, not Kafka's 3 s:
	// the broker then forms the handed-back group's first generation with
	// the first classic member alone, the hand-back's hardest case (its
	// members must own nothing when they go upstream; docs/fast-roll.md
	// §11).
	out, ctx, b := smokeBroker(t, 12*time.Minute)
	// Kafka's default streams session (45 s), not the tests' 10 s: a
	// streams client that left waits for its successor (its tasks kept)
	// up to its session or its disconnect expiry, and a successor's JVM
	// start on a loaded machine takes longer than 10 s.
	c, err := startSSCluster(ctx, t, out, b.Bootstrap, oneAddress, append(slices.Clone(nativeTestSettings), "STREAMSHIFT_STREAMS_SESSION_TIMEOUT_MS=45000")...)
	if err != nil {
		t.Fatal(err)
	}
	var servers []harness.HAProxyServer
	for i, h := range c.hosts {
		servers = append(servers, harness.HAProxyServer{Name: fmt.Sprintf("s%d", i+1), Host: h, AdminPort: c.port + 2})
	}
	lb, err := harness.StartHAProxy(ctx, harness.HAProxyOptions{Bin: haproxy, Dir: filepath.Join(out, "haproxy"), Bind: oneAddress,
		Ports: []int{c.port, c.port + 1}, Servers: servers})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lb.Stop() })
	if err := lb.WaitServers(ctx, "UP", "s1", "s2", "s3"); err != nil {
		t.Fatal(err)
	}
	bootstrap := net.JoinHostPort(oneAddress, strconv.Itoa(c.port))
	coordinator := net.JoinHostPort(oneAddress, strconv.Itoa(c.port+1))

	franz, err := startFranzGroup(ctx, t, b.Bootstrap, bootstrap)
	if err != nil {
		t.Fatal(err)
	}
	tools := &oneAddressTools{dir: out, bootstrap: bootstrap, coordinator: coordinator, franz: franz}
	countApp, err := startOneAddressApp(ctx, t, out, b.Bootstrap, bootstrap)
	if err != nil {
		t.Fatal(err)
	}

	killed := -1
	// STREAMSHIFT_E2E_ONE_ADDRESS_KILL=0 leaves the owner alive: the
	// takeover step's time behind one address without a failover (a
	// measurement, BENCHMARKS.md).
	kill := os.Getenv("STREAMSHIFT_E2E_ONE_ADDRESS_KILL") != "0"
	// killOwner kills -9 the instance owning the group once line is in
	// its log, and waits until HAProxy's health check marks it down.
	killOwner := func(ctx context.Context, line string) error {
		if !kill {
			return nil
		}
		o, err := c.owner(ctx, 0, group)
		if err != nil {
			return err
		}
		if err := c.procs[o].waitLog(ctx, line, 90*time.Second); err != nil {
			return err
		}
		// A restarted instance gets only new connections: say how many
		// of the clients' the owner held.
		sess, err := lb.Sessions()
		if err != nil {
			return err
		}
		c.procs[o].kill9()
		killed = o
		t.Logf("group %s is owned by s%d, which logged %q and held %d of the clients' connections through haproxy (%v): killed it", group, o+1, line, sess[servers[o].Name], sess)
		return lb.WaitServers(ctx, "DOWN", servers[o].Name)
	}
	// restart brings the killed instance back.
	restart := func(ctx context.Context) error {
		if killed < 0 {
			return nil
		}
		if err := c.procs[killed].start(ctx); err != nil {
			return err
		}
		if err := c.settled(ctx, 0, 1, 2); err != nil {
			return err
		}
		if err := lb.WaitServers(ctx, "UP", servers[killed].Name); err != nil {
			return err
		}
		killed = -1
		return nil
	}
	checked := func(phase string, streams, classic int) func(context.Context, harness.SmokeControl) error {
		return func(ctx context.Context, _ harness.SmokeControl) error {
			return tools.check(ctx, phase, streams, classic)
		}
	}
	// ended says in the test's log how each rolling step ended: its
	// time from the stop to a settled group and the instances' lines
	// that matched the successor to its predecessor (replaced by
	// identity) or fenced a member by its session.
	endings := &stepEndings{dir: out, seen: map[string]bool{}}
	ended := func(ctx context.Context, step harness.SmokeRollStep) error {
		matched, expired, err := endings.since()
		if err != nil {
			return err
		}
		t.Logf("step %q: every client RUNNING %.1f s after the stop, group settled at %.1f s; %d replacement lines, %d fenced by an expiry (session, disconnect, unseen)",
			step.Name, step.Running.Seconds(), step.Settled.Seconds(), len(matched), len(expired))
		for _, l := range append(matched, expired...) {
			t.Logf("  %s", l)
		}
		return nil
	}
	// A classic client's session is Kafka's default 45 s (not the
	// harness's 10 s): a predecessor still in the group when its
	// successor joins is replaced by identity, or the step costs 45 s
	// (issue #41).
	classic := func(name, version, of string) harness.SmokeClient {
		return harness.SmokeClient{Name: name, Version: version, GroupProtocol: "classic", SessionTimeout: 45 * time.Second, StateOf: of}
	}
	// A successor runs on the state directory of the client it
	// succeeds, as a real rolling step does: the same process id
	// (KAFKA-10716), so the step ends by replacement by identity
	// wherever the two were connected (issue #41).
	streams := func(name, of string) harness.SmokeClient {
		return harness.SmokeClient{Name: name, Version: harness.Kafka44, GroupProtocol: "streams", StateOf: of}
	}
	rep, err := harness.RunKafkaSmokeRoll(ctx, harness.SmokeRollOptions{
		Dir:       filepath.Join(out, "smoke"),
		Bootstrap: bootstrap,
		Admin:     b.Bootstrap,
		Guarantee: "exactly_once_v2",
		// Three times Kafka Streams' exactly-once default of 10 s: under
		// the suite's load on 2 cores (load average 20-30) a starved
		// client's transaction outlasted 10 s with no fault of the
		// proxies, the broker aborted it and fenced the producer, and the
		// tasks closed dirty. 30 s still holds the owner's kill (the
		// survivors serve the group within about 6 s) to a bound.
		Props: map[string]string{"transaction.timeout.ms": "30000"},
		// The four rolls, a kill and three rounds of CLI checks happen under
		// input: about 130 s on a quiet machine, 280 s under the whole
		// suite's load on 2 cores (each successor's JVM then starts after
		// its predecessor's disconnect expiry, and its tasks move twice).
		Duration: 300 * time.Second,
		Start: []harness.SmokeClient{
			// Clients before 3.8 (they cannot bootstrap again), as the
			// issue's migration from 3.6.
			classic("o1", harness.Kafka36, ""),
			classic("o2", harness.Kafka36, ""),
		},
		// The fast roll, nothing killed but the owner once, mid-takeover:
		// o1 → s1 takes the group over, o2 → s2, s1 → c3 (4.4 classic),
		// s2 → c4 hands it back; each stop is followed by its successor.
		Rolls: []harness.SmokeRoll{
			{Name: "roll o1 to s1 (4.4 streams: the takeover), kill -9 the owner mid-takeover",
				Stop: "o1", Start: streams("s1", "o1"),
				After: func(ctx context.Context, _ harness.SmokeControl) error {
					return killOwner(ctx, "takeover of a live classic group starts")
				},
				Settled: ended},
			{Name: "the killed owner back; the franz-go group and the CLI",
				After: func(ctx context.Context, sc harness.SmokeControl) error {
					if err := restart(ctx); err != nil {
						return err
					}
					return checked("after the takeover and the owner's death", 1, 1)(ctx, sc)
				}},
			{Name: "roll o2 to s2 (4.4 streams)", Stop: "o2", Start: streams("s2", "o2"), Settled: ended},
			{Name: "the franz-go group and the CLI with two streams clients", After: checked("with two streams clients", 2, 0)},
			{Name: "roll s1 to c3 (4.4 classic)", Stop: "s1", Start: classic("c3", harness.Kafka44, "s1"), Settled: ended},
			{Name: "roll s2 to c4 (4.4 classic: the hand-back)", Stop: "s2", Start: classic("c4", harness.Kafka44, "s2"), Settled: ended},
		},
		AfterRolls: func(ctx context.Context) error {
			if err := checkHandedBack(ctx, b.Bootstrap, group, 2); err != nil {
				return err
			}
			return tools.check(ctx, "after the hand-back", 0, 0)
		},
		Logf: t.Logf,
	})
	if rep != nil {
		writeSmokeRollReport(t, filepath.Join(out, "report.md"), rep)
	}
	if err != nil {
		t.Fatalf("smoke test through HAProxy in front of three streamshift instances, the owner killed during an online migration (logs in %s): %v", out, err)
	}
	if err := countApp.verify(ctx); err != nil {
		t.Fatal(err)
	}
	if err := checkOneAddressReplaced(t, out); err != nil {
		t.Fatal(err)
	}
	// The owner's death costs the clients no task: with the durable log
	// the next owner serves the group as it was.
	if err := checkSmokeClientFiles(filepath.Join(out, "smoke"), "log", "INCONSISTENT_GROUP_PROTOCOL",
		"incompatible with those of existing members", "GROUP_ID_NOT_FOUND", "GroupIdNotFoundException",
		"FENCED_INSTANCE_ID", "UNRELEASED_INSTANCE_ID", "Closed dirty"); err != nil {
		t.Fatal(err)
	}
	if err := checkSmokeClientFiles(filepath.Join(out, "smoke"), "out", "-> ERROR", "-> PENDING_ERROR"); err != nil {
		t.Fatal(err)
	}
}

// oneAddressTools checks the franz-go group's progress and Kafka's CLI
// answers through the one address.
type oneAddressTools struct {
	dir, bootstrap, coordinator string
	franz                       *franzGroup
}

// check: every franz-go member consumes again; kafka-consumer-groups
// --list names the franz-go group (and the smoke group exactly while it is
// classic) and --describe gives each franz-go partition a member and a
// committed offset; with the smoke group served as a streams group
// (streams+classic members), kafka-streams-groups --describe names the
// coordinator at the one address, state Stable and those members by
// protocol, kafka-groups --list types both groups and kafka-configs
// describes the smoke group's streams configs; once it is a classic group
// again, kafka-consumer-groups --describe --members lists its two classic
// clients. The tools run at once.
func (o *oneAddressTools) check(ctx context.Context, phase string, streams, classic int) error {
	if err := o.franz.progress(ctx); err != nil {
		return fmt.Errorf("%s: %w", phase, err)
	}
	checks := []func(context.Context) error{o.listed(streams+classic == 0), o.franzDescribed}
	if streams+classic == 0 {
		checks = append(checks, o.classicMembers)
	} else {
		checks = append(checks, o.streamsState(streams+classic), o.streamsMembers(streams, classic), o.groupsListed, o.groupConfigs)
	}
	errs := make(chan error, len(checks))
	for _, c := range checks {
		go func() { errs <- c(ctx) }()
	}
	var first error
	for range checks {
		if err := <-errs; err != nil && first == nil {
			first = fmt.Errorf("%s: %w", phase, err)
		}
	}
	return first
}

// listed: kafka-consumer-groups --list names the franz-go group, and the
// smoke group exactly while it is classic: a streams group is not a
// consumer group (Kafka 4.4's tool lists classic and consumer groups), and
// every instance knows the served groups of the others (ListGroups asks
// them).
func (o *oneAddressTools) listed(classicSmoke bool) func(context.Context) error {
	return func(ctx context.Context) error {
		list, err := o.tool(ctx, "kafka-consumer-groups", "--list")
		if err != nil {
			return err
		}
		if !hasLine(list, o.franz.group) || hasLine(list, "SmokeTest") != classicSmoke {
			return fmt.Errorf("kafka-consumer-groups --list: want %s, and SmokeTest %t:\n%s", o.franz.group, classicSmoke, list)
		}
		return nil
	}
}

// groupsListed: kafka-groups --list names the smoke group as a streams
// group and the franz-go group as a classic one.
func (o *oneAddressTools) groupsListed(ctx context.Context) error {
	list, err := o.tool(ctx, "kafka-groups", "--list")
	if err != nil {
		return err
	}
	// GROUP TYPE PROTOCOL
	types := map[string]string{}
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) > 1 {
			types[f[0]] = strings.ToLower(f[1])
		}
	}
	if types["SmokeTest"] != "streams" || types[o.franz.group] != "classic" {
		return fmt.Errorf("kafka-groups --list: want SmokeTest streams, %s classic, got %v:\n%s", o.franz.group, types, list)
	}
	return nil
}

// groupConfigs: kafka-configs --describe --entity-type groups of the
// smoke group, served by streamshift, has its streams configs.
func (o *oneAddressTools) groupConfigs(ctx context.Context) error {
	out, err := o.tool(ctx, "kafka-configs", "--describe", "--entity-type", "groups", "--entity-name", "SmokeTest", "--all")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "streams.session.timeout.ms=") {
			return nil
		}
	}
	return fmt.Errorf("kafka-configs --describe --entity-type groups SmokeTest lacks its streams configs:\n%s", out)
}

// classicMembers: kafka-consumer-groups --describe --members lists the
// smoke group's two classic clients.
func (o *oneAddressTools) classicMembers(ctx context.Context) error {
	desc, err := o.tool(ctx, "kafka-consumer-groups", "--describe", "--group", "SmokeTest", "--members")
	if err != nil {
		return err
	}
	if n := len(toolRows(desc, "SmokeTest")); n != 2 {
		return fmt.Errorf("kafka-consumer-groups --describe --members lists %d members of SmokeTest, want 2:\n%s", n, desc)
	}
	return nil
}

// streamsState: kafka-streams-groups --describe --state names the
// coordinator at the one address (node 1, the broker's id), Stable, and
// the number of members.
func (o *oneAddressTools) streamsState(members int) func(context.Context) error {
	return func(ctx context.Context) error {
		state, err := o.tool(ctx, "kafka-streams-groups", "--describe", "--group", "SmokeTest", "--state")
		if err != nil {
			return err
		}
		// The header "COORDINATOR (ID)" is two fields, as its values are.
		rows := toolRows(state, "SmokeTest")
		if len(rows) != 1 || rows[0]["COORDINATOR"] != o.coordinator || rows[0]["(ID)"] != "(1)" || rows[0]["STATE"] != "Stable" ||
			rows[0]["#MEMBERS"] != strconv.Itoa(members) {
			return fmt.Errorf("kafka-streams-groups --describe --state: want coordinator %s (1), Stable, %d members:\n%s", o.coordinator, members, state)
		}
		return nil
	}
}

// streamsMembers: kafka-streams-groups --describe --members --verbose
// lists that many streams and classic members.
func (o *oneAddressTools) streamsMembers(streams, classic int) func(context.Context) error {
	return func(ctx context.Context) error {
		members, err := o.tool(ctx, "kafka-streams-groups", "--describe", "--group", "SmokeTest", "--members", "--verbose")
		if err != nil {
			return err
		}
		byProtocol := map[string]int{}
		for _, r := range toolRows(members, "SmokeTest") {
			byProtocol[r["MEMBER-PROTOCOL"]]++
		}
		if byProtocol["streams"] != streams || byProtocol["classic"] != classic || len(byProtocol) > 2 {
			return fmt.Errorf("kafka-streams-groups --describe --members: %v, want %d streams and %d classic:\n%s", byProtocol, streams, classic, members)
		}
		return nil
	}
}

// franzDescribed: kafka-consumer-groups --describe of the franz-go group
// gives each of its partitions a committed offset and a member.
func (o *oneAddressTools) franzDescribed(ctx context.Context) error {
	out, err := o.tool(ctx, "kafka-consumer-groups", "--describe", "--group", o.franz.group)
	if err != nil {
		return err
	}
	parts := map[string]bool{}
	for _, r := range toolRows(out, o.franz.group) {
		if r["TOPIC"] != o.franz.topic {
			return fmt.Errorf("kafka-consumer-groups --describe %s: row %v:\n%s", o.franz.group, r, out)
		}
		if _, err := strconv.ParseInt(r["CURRENT-OFFSET"], 10, 64); err != nil || r["CONSUMER-ID"] == "" || r["CONSUMER-ID"] == "-" {
			return fmt.Errorf("kafka-consumer-groups --describe %s: partition %s without a committed offset or a member:\n%s", o.franz.group, r["PARTITION"], out)
		}
		parts[r["PARTITION"]] = true
	}
	if len(parts) != franzPartitions {
		return fmt.Errorf("kafka-consumer-groups --describe %s: %d partitions, want %d:\n%s", o.franz.group, len(parts), franzPartitions, out)
	}
	return nil
}

// tool runs a Kafka CLI tool through the one address; an error exit or an
// "Error" line fails.
func (o *oneAddressTools) tool(ctx context.Context, name string, args ...string) (string, error) {
	out, err := harness.RunTool(ctx, o.dir, name, append([]string{"--bootstrap-server", o.bootstrap}, args...)...)
	if err != nil {
		return out, err
	}
	if strings.Contains(out, "Error") || strings.Contains(out, "Exception") {
		return out, fmt.Errorf("%s %v:\n%s", name, args, out)
	}
	return out, nil
}

// toolRows are a CLI table's rows of group: each line whose first field
// is group, its fields by the column names of the last header line
// (first field GROUP) above it.
func toolRows(out, group string) []map[string]string {
	var header []string
	var rows []map[string]string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == "GROUP":
			header = f
		case f[0] == group:
			row := map[string]string{}
			for i, v := range f {
				if i < len(header) {
					row[header[i]] = v
				}
			}
			rows = append(rows, row)
		}
	}
	return rows
}

func hasLine(out, s string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == s {
			return true
		}
	}
	return false
}

// franzPartitions is the franz-go group's topic's partition count.
const franzPartitions = 4

// franzGroup is a franz-go producer and two consumer-group members, all
// bootstrapping to the one address, running until the test ends.
type franzGroup struct {
	group, topic string
	mu           sync.Mutex
	consumed     [2]int
	errs         []error
}

// startFranzGroup creates the topic on the broker, then produces to it a
// record every 20 ms and consumes it in a classic consumer group of two
// members (auto-committing), all through bootstrap.
func startFranzGroup(ctx context.Context, t *testing.T, upstream, bootstrap string) (*franzGroup, error) {
	f := &franzGroup{group: "one-address-franz", topic: "one-address-franz-in"}
	admin, err := kgo.NewClient(kgo.SeedBrokers(upstream))
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	if _, err := kadm.NewClient(admin).CreateTopic(ctx, franzPartitions, 1, nil, f.topic); err != nil {
		return nil, fmt.Errorf("create %s: %w", f.topic, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	prod, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.DefaultProduceTopic(f.topic), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		return nil, err
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer prod.Close()
		for i := 0; ctx.Err() == nil; i++ {
			if err := prod.ProduceSync(ctx, kgo.StringRecord(strconv.Itoa(i))).FirstErr(); err != nil && ctx.Err() == nil {
				f.fail(fmt.Errorf("produce: %w", err))
			}
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	for m := range f.consumed {
		cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumerGroup(f.group), kgo.ConsumeTopics(f.topic),
			kgo.ClientID(fmt.Sprintf("franz-%d", m+1)), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		if err != nil {
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cl.Close()
			for ctx.Err() == nil {
				fs := cl.PollFetches(ctx)
				fs.EachError(func(topic string, p int32, err error) {
					if ctx.Err() == nil {
						f.fail(fmt.Errorf("member %d fetch %s/%d: %w", m+1, topic, p, err))
					}
				})
				f.mu.Lock()
				f.consumed[m] += fs.NumRecords()
				f.mu.Unlock()
			}
		}()
	}
	return f, nil
}

func (f *franzGroup) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, err)
}

// progress waits until every member consumed more than it had (each owns
// some of the partitions once the group is stable).
func (f *franzGroup) progress(ctx context.Context) error {
	f.mu.Lock()
	before := f.consumed
	f.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	for {
		f.mu.Lock()
		now, errs := f.consumed, len(f.errs)
		f.mu.Unlock()
		if now[0] > before[0] && now[1] > before[1] {
			return nil
		}
		select {
		case <-ctx.Done():
			f.mu.Lock()
			defer f.mu.Unlock()
			return fmt.Errorf("franz-go group %s: members consumed %v, before %v (%d client errors, last %v)", f.group, now, before, errs, lastErr(f.errs))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func lastErr(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return errs[len(errs)-1]
}
