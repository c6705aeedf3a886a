//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/streamshift/streamshift/e2e/harness"
	"github.com/streamshift/streamshift/upstream"
)

// exactUsers: streamshift's control plane, a second streamshift for the
// removals, a third with no ACL at all (proxying only), and the Streams app.
var exactUsers = map[string]string{"streamshift": "streamshift-secret", "ss2": "ss2-secret", "ss0": "ss0-secret", "app": "app-secret"}

// exactNewGroup is the streams group whose internal topic streamshift
// creates; exactSrcGroup the one of the removals' source-topic row.
const (
	exactNewGroup = "e2e-acl-new"
	exactSrcGroup = "e2e-acl-src"
	// exactNoCreateGroup: the removals' CREATE row.
	exactNoCreateGroup = "e2e-acl-nc"
)

// exactAppACLs are the app's: what Kafka's docs list for a Kafka Streams
// app (streams/developer-guide/security.md), for e2e-count and for the
// groups of the raw joins (prefix e2e-acl-), nothing for streamshift.
func exactAppACLs() []*kadm.ACLBuilder {
	lit, pre := kadm.ACLPatternLiteral, kadm.ACLPatternPrefixed
	return []*kadm.ACLBuilder{
		kadm.NewACLs().Allow("User:app").Groups("e2e-count").ResourcePatternType(lit).Operations(kadm.OpRead),
		kadm.NewACLs().Allow("User:app").Topics("e2e-input").ResourcePatternType(lit).Operations(kadm.OpRead),
		kadm.NewACLs().Allow("User:app").Topics("e2e-output").ResourcePatternType(lit).Operations(kadm.OpWrite),
		kadm.NewACLs().Allow("User:app").Topics("e2e-count").ResourcePatternType(pre).Operations(kadm.OpAll),
		kadm.NewACLs().Allow("User:app").TransactionalIDs("e2e-count").ResourcePatternType(pre).Operations(kadm.OpWrite),
		kadm.NewACLs().Allow("User:app").Clusters().Operations(kadm.OpIdempotentWrite),
		kadm.NewACLs().Allow("User:app").Groups("e2e-acl-").ResourcePatternType(pre).Operations(kadm.OpRead),
		kadm.NewACLs().Allow("User:app").Topics("e2e-acl-").ResourcePatternType(pre).Operations(kadm.OpAll),
	}
}

// TestACLsExact: Kafka 3.9 with a SASL_SSL listener (SCRAM-SHA-512),
// StandardAuthorizer and allow.everyone.if.no.acl.found=false. The
// harness's PLAINTEXT listener is the only super user (ANONYMOUS);
// streamshift's principal gets exactly the commands `streamshift acls`
// prints for its configuration, run through Kafka's kafka-acls tool, and
// the app's what Kafka's docs list for a Streams app. Three streamshift
// instances sharing the durable log speak SASL_SSL to the broker; the app
// (exactly once) authenticates through them as "app":
//   - an online migration: two classic instances rolled to streams, then
//     back to classic;
//   - the instance owning the group killed -9, the app going on;
//   - a streams group whose internal topic is missing: streamshift
//     creates it;
//   - no streamshift log line says an authorization failed or an ACL is
//     missing (it would name the resource), and each instance's start-up
//     check found every ACL.
//
// Then one ACL at a time is removed from a second streamshift's principal
// ("ss2", its own log topic and cluster id, granted its own `streamshift
// acls` rows) to show what breaks without it: CREATE on the log topic (the
// start fails), WRITE on the log's transactional ids and READ on the
// instance group (the start-up check warns naming it, and the log's
// partitions are refused), DESCRIBE on a source topic (the group reports
// MISSING_SOURCE_TOPICS), CREATE on the internal topics' prefix (the group's
// status says the creation failed, the topic is not there), READ on the
// app's group (the anchor member is refused). A streamshift whose principal has no ACL at all,
// without the durable log, proxies a producer and a consumer group.
func TestACLsExact(t *testing.T) {
	t.Parallel()
	pki := t.TempDir()
	sec, overrides, err := harness.NewSecureListeners(filepath.Join(pki, "broker"), exactUsers)
	if err != nil {
		t.Fatal(err)
	}
	scram512 := func(user string) sasl.Mechanism {
		return scram.Auth{User: user, Pass: exactUsers[user]}.AsSha512Mechanism()
	}
	controlPlane := func(user string) []string {
		return []string{"STREAMSHIFT_UPSTREAM_TLS_ENABLED=true", "STREAMSHIFT_UPSTREAM_TLS_CA_FILE=" + sec.CAFile,
			"STREAMSHIFT_CONTROL_PLANE_SASL_MECHANISM=SCRAM-SHA-512", "STREAMSHIFT_CONTROL_PLANE_SASL_USERNAME=" + user,
			"STREAMSHIFT_CONTROL_PLANE_SASL_PASSWORD=" + exactUsers[user]}
	}
	appProps := []string{"security.protocol=SASL_PLAINTEXT", "sasl.mechanism=SCRAM-SHA-512",
		`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="app" password="` + exactUsers["app"] + `";`}

	var c *ssCluster
	var bin string
	// The rolls as TestStreamsProxyOnlineMigration's: persistent stores
	// kept across each roll (the successor is the same process id, replaced
	// by identity) and the disconnect expiry off (a loaded machine's JVM
	// start outlasts it).
	//
	// Tolerated: a classic member whose coordinator connection is on an
	// instance not owning the group can have its JoinGroup sent upstream
	// with streamshift's member id during the hand-back, and the broker
	// answers UNKNOWN_MEMBER_ID (it rejoins at once, nothing closed dirty).
	// Seen in 3 of 5 runs, always with the member on a non-owner; not an
	// ACL matter, reported apart (issue #44's report).
	roll := &migrationRoll{ends: map[string]time.Time{}, keepState: true,
		tolerate: []string{"encountered UNKNOWN_MEMBER_ID from JOIN_GROUP response"}}
	harness.RunScenario(t, harness.Scenario{
		Name:   "exactly streamshift acls' ACLs: online migration, three instances, an owner killed, a topic created",
		Broker: harness.Kafka39,
		BrokerOverrides: append(overrides,
			"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
			"allow.everyone.if.no.acl.found=false",
			"super.users=User:ANONYMOUS"),
		AppBuild:      harness.App44,
		GroupProtocol: "classic",
		Guarantee:     "exactly_once_v2",
		AppExtra:      append(append([]string{}, rollAppExtra...), appProps...),
		Hold:          5 * time.Second,
		Route: func(ctx context.Context, r *harness.Run) (string, error) {
			if err := sec.AddSCRAMUsers(ctx, r.Broker.Bootstrap); err != nil {
				return "", err
			}
			if err := grantBuilders(ctx, r.Broker.Bootstrap, exactAppACLs()); err != nil {
				return "", err
			}
			var err error
			if bin, err = harness.BuildStreamshift(r.Dir); err != nil {
				return "", err
			}
			env := append(controlPlane("streamshift"), "STREAMSHIFT_COORDINATOR_CLUSTER_ID=e2e-instances")
			n, err := grantPrinted(ctx, r, bin, r.Broker.Bootstrap, "User:streamshift", env,
				"--upstream", sec.SASLSSL, "--group", "e2e-count", "--group", exactNewGroup, "--source-topic", "e2e-input")
			if err != nil {
				return "", err
			}
			r.T.Logf("granted User:streamshift the %d ACLs streamshift acls printed, with kafka-acls", n)
			c, err = startSSClusterProbed(ctx, r.T, r.Dir, sec.SASLSSL, "", []kgo.Opt{kgo.SASL(scram512("app"))},
				append(append([]string{"STREAMSHIFT_MIGRATION_DISCONNECT_EXPIRY_HEARTBEATS=0"}, nativeTestSettings...), controlPlane("streamshift")...)...)
			if err != nil {
				if aerr := checkNoAuthorizationFailure(r.Dir); aerr != nil {
					return "", fmt.Errorf("%w; %v", err, aerr)
				}
				return "", err
			}
			return c.bootstrap(), nil
		},
		Steps: namingACLs([]harness.Step{
			roll.start("c1", harness.App44, "classic"),
			roll.start("c2", harness.App44, "classic"),
			roll.replace("c1", "s1", "streams"),
			roll.replace("c2", "s2", "streams"),
			{Name: "kill -9 the streamshift instance owning the group", Do: func(ctx context.Context, r *harness.Run) error {
				o, err := c.owner(ctx, 0, "e2e-count")
				if err != nil {
					return err
				}
				r.T.Logf("e2e-count is owned by s%d: killing it", o+1)
				c.procs[o].kill9()
				if err := c.settled(ctx, others(o)...); err != nil {
					return err
				}
				if err := c.procs[o].start(ctx); err != nil {
					return err
				}
				return c.settled(ctx, 0, 1, 2)
			}},
			{Name: "a streams group's missing internal topic is created by streamshift", Check: true, Do: func(ctx context.Context, r *harness.Run) error {
				return checkTopicCreated(ctx, c.bootstrap(), r.Broker.Bootstrap, scram512("app"))
			}},
			roll.replace("s1", "c3", "classic"),
			roll.replace("s2", "c4", "classic"),
			roll.check(),
			{Name: "no streamshift instance met a refused authorization; each found its ACLs at start", Check: true, Do: func(ctx context.Context, r *harness.Run) error {
				return checkNoAuthorizationFailure(r.Dir)
			}},
			{Name: "proxying only: a streamshift whose principal has no ACL at all", Check: true, Do: func(ctx context.Context, r *harness.Run) error {
				return checkProxyOnly(ctx, r, bin, sec.SASLSSL, controlPlane("ss0"), scram512("app"))
			}},
			{Name: "one ACL removed at a time: what breaks", Check: true, Do: func(ctx context.Context, r *harness.Run) error {
				return checkEachNeeded(ctx, r, bin, sec.SASLSSL, controlPlane("ss2"), scram512("app"))
			}},
		}),
	})
}

// grantBuilders creates ACLs through the PLAINTEXT listener (the super
// user) and waits until the broker applies them.
func grantBuilders(ctx context.Context, bootstrap string, bs []*kadm.ACLBuilder) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	for _, b := range bs {
		res, err := adm.CreateACLs(ctx, b)
		if err != nil {
			return fmt.Errorf("create ACLs: %w", err)
		}
		for _, r := range res {
			if r.Err != nil {
				return fmt.Errorf("create ACL %s %s %s: %w", r.Principal, r.Type, r.Name, r.Err)
			}
		}
	}
	return nil
}

// grantPrinted runs `streamshift acls --principal principal args...` with
// env and runs every kafka-acls command it prints with Kafka's tool
// against bootstrap, four at a time, then waits until the broker describes
// that many ACLs of principal. It returns how many.
func grantPrinted(ctx context.Context, r *harness.Run, bin, bootstrap, principal string, env []string, args ...string) (int, error) {
	cmd := exec.CommandContext(ctx, bin, append([]string{"acls", "--principal", principal, "--bootstrap-server", bootstrap}, args...)...)
	cmd.Env = append(harness.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("streamshift acls: %w", err)
	}
	if err := os.WriteFile(filepath.Join(r.Dir, "acls-"+strings.TrimPrefix(principal, "User:")+".sh"), out, 0o644); err != nil {
		return 0, err
	}
	var cmds [][]string
	// E2E_ACLS_SKIP leaves out the commands containing it: the run then
	// shows how the test fails without that ACL.
	skip := os.Getenv("E2E_ACLS_SKIP")
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "kafka-acls.sh "); ok {
			if skip != "" && strings.Contains(rest, skip) {
				r.T.Logf("E2E_ACLS_SKIP: not granting %s", rest)
				continue
			}
			if strings.ContainsAny(rest, `'"\`) {
				return 0, fmt.Errorf("a quoted argument: %s", line)
			}
			cmds = append(cmds, strings.Fields(rest))
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(cmds))
	sem := make(chan struct{}, 4)
	for _, a := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if _, err := harness.RunTool(ctx, r.Dir, "kafka-acls", a...); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, err
	}
	return len(cmds), waitACLs(ctx, bootstrap, principal, len(cmds))
}

// waitACLs waits until the broker describes n ACLs of principal
// (StandardAuthorizer applies them from the metadata log).
func waitACLs(ctx context.Context, bootstrap, principal string, n int) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		res, err := adm.DescribeACLs(ctx, kadm.NewACLs().AnyResource().Allow(principal).AllowHosts().ResourcePatternType(kadm.ACLPatternAny).Operations(kadm.OpAny))
		got := 0
		if err == nil {
			for _, r := range res {
				got += len(r.Described)
			}
			if got == n {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d ACLs of %s described, want %d (%v): %w", got, principal, n, err, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// streamsJoinThrough sends a first StreamsGroupHeartbeat of group (one
// subtopology reading e2e-input, a store in <group>-store-changelog) as m
// through the streamshift at addr, to the group's coordinator.
func streamsJoinThrough(ctx context.Context, addr string, m sasl.Mechanism, group, member string) (*kmsg.StreamsGroupHeartbeatResponse, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(addr, ",")...), kgo.SASL(m), kgo.RequestRetries(2))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey, fc.CoordinatorKeys = group, []string{group}
	fr, err := fc.RequestWith(ctx, cl)
	if err != nil || len(fr.Coordinators) != 1 || fr.Coordinators[0].ErrorCode != 0 {
		return nil, fmt.Errorf("find the coordinator of %s: %v %+v", group, err, fr)
	}
	return streamsJoin(group, member, []string{"e2e-input"}, group+"-store-changelog").RequestWith(ctx, cl.Broker(int(fr.Coordinators[0].NodeID)))
}

// checkTopicCreated joins exactNewGroup, whose changelog does not exist,
// until streamshift has created it.
func checkTopicCreated(ctx context.Context, addr, super string, m sasl.Mechanism) error {
	changelog := exactNewGroup + "-store-changelog"
	sc, err := kgo.NewClient(kgo.SeedBrokers(super))
	if err != nil {
		return err
	}
	defer sc.Close()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for i := 1; ; i++ {
		jr, err := streamsJoinThrough(ctx, addr, m, exactNewGroup, "new-"+strconv.Itoa(i))
		if err != nil {
			return fmt.Errorf("join %s: %w", exactNewGroup, err)
		}
		if jr.ErrorCode != 0 || len(jr.Status) > 0 && strings.Contains(jr.Status[0].StatusDetail, "Unauthorized") {
			return fmt.Errorf("join %s: code %d %+v", exactNewGroup, jr.ErrorCode, jr.Status)
		}
		topics, err := kadm.NewClient(sc).ListTopics(ctx, changelog)
		if err == nil && topics.Has(changelog) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not created by streamshift: %w", changelog, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// checkNoAuthorizationFailure reads every streamshift log of the run: a
// warning or error naming an authorization failure, or the start-up
// check's missing ACL, fails with the line (which names the resource); and
// every start found its ACLs.
func checkNoAuthorizationFailure(dir string) error {
	logs, err := filepath.Glob(filepath.Join(dir, "streamshift-s*", "streamshift-*.log"))
	if err != nil || len(logs) == 0 {
		return fmt.Errorf("no streamshift logs in %s: %v", dir, err)
	}
	for _, f := range logs {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		found := false
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "lacks an ACL") ||
				strings.Contains(line, "AUTHORIZATION_FAILED") && (strings.Contains(line, `"level":"warn"`) || strings.Contains(line, `"level":"error"`)) {
				return fmt.Errorf("%s: %s", f, line)
			}
			found = found || strings.Contains(line, "has the ACLs of the durable group log")
		}
		if !found {
			return fmt.Errorf("%s: the start-up ACL check did not report", f)
		}
	}
	return nil
}

// checkEachNeeded grants "ss2" its own `streamshift acls` rows (log topic
// __streamshift_groups_ss2, cluster id e2e-acl-ss2, group exactSrcGroup)
// and removes one at a time, starting a streamshift as ss2 each time.
func checkEachNeeded(ctx context.Context, r *harness.Run, bin, upstreamAddr string, env []string, app sasl.Mechanism) error {
	env = append(env, nativeTestSettings...)
	env = append(env, "STREAMSHIFT_COORDINATOR_DURABLE_LOG=true", "STREAMSHIFT_COORDINATOR_LOG_TOPIC=__streamshift_groups_ss2",
		"STREAMSHIFT_COORDINATOR_CLUSTER_ID=e2e-acl-ss2", "STREAMSHIFT_COORDINATOR_LOG_PARTITIONS=2",
		"STREAMSHIFT_COORDINATOR_INSTANCE_SESSION_TIMEOUT=6s")
	rows := upstream.RequiredACLs(upstream.ACLNeeds{Groups: []string{exactSrcGroup, exactNoCreateGroup}, SourceTopics: []string{"e2e-input"}, DurableLog: true,
		LogTopic: "__streamshift_groups_ss2", InstanceGroup: "__streamshift_cluster_e2e-acl-ss2"})
	sc, err := kgo.NewClient(kgo.SeedBrokers(r.Broker.Bootstrap))
	if err != nil {
		return err
	}
	defer sc.Close()
	adm := kadm.NewClient(sc)
	builder := func(a upstream.ACL) *kadm.ACLBuilder {
		b := kadm.NewACLs().Allow("User:ss2").AllowHosts().Operations(kadm.ACLOperation(a.Operation)).ResourcePatternType(kadm.ACLPattern(a.Pattern))
		switch a.Resource {
		case kmsg.ACLResourceTypeTopic:
			b = b.Topics(a.Name)
		case kmsg.ACLResourceTypeGroup:
			b = b.Groups(a.Name)
		case kmsg.ACLResourceTypeTransactionalId:
			b = b.TransactionalIDs(a.Name)
		}
		return b
	}
	var all []*kadm.ACLBuilder
	for _, a := range rows {
		all = append(all, builder(a))
	}
	if err := grantBuilders(ctx, r.Broker.Bootstrap, all); err != nil {
		return err
	}
	if err := waitACLs(ctx, r.Broker.Bootstrap, "User:ss2", len(rows)); err != nil {
		return err
	}
	find := func(rt kmsg.ACLResourceType, op kmsg.ACLOperation, name string) upstream.ACL {
		for _, a := range rows {
			if a.Resource == rt && a.Operation == op && a.Name == name {
				return a
			}
		}
		panic(fmt.Sprintf("no row %s %s %s", op, rt, name))
	}
	cases := []struct {
		acl upstream.ACL
		// startFails: the start fails; else the running instance shows
		// breaks (a log line) or check says what broke.
		startFails bool
		breaks     string
		check      func(ctx context.Context, addr string) error
		// notNeeded: the row is not needed now (CREATE of a log topic
		// that exists); the start-up check says so, and no warning names
		// it. before runs after the ACL is removed, before the start.
		notNeeded bool
		before    func(ctx context.Context) error
	}{
		// The log topic exists (the control start created it): least
		// privilege, an operator may create it and grant no CREATE.
		{acl: find(kmsg.ACLResourceTypeTopic, kmsg.ACLOperationCreate, "__streamshift_groups_ss2"), notNeeded: true},
		// Without the topic, the start creates it and fails.
		{acl: find(kmsg.ACLResourceTypeTopic, kmsg.ACLOperationCreate, "__streamshift_groups_ss2"), startFails: true,
			breaks: "create group log topic __streamshift_groups_ss2: TOPIC_AUTHORIZATION_FAILED",
			before: func(ctx context.Context) error { return deleteTopicGone(ctx, adm, "__streamshift_groups_ss2") }},
		{acl: find(kmsg.ACLResourceTypeTransactionalId, kmsg.ACLOperationWrite, "streamshift-__streamshift_groups_ss2-"),
			breaks: "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"},
		{acl: find(kmsg.ACLResourceTypeGroup, kmsg.ACLOperationRead, "__streamshift_cluster_e2e-acl-ss2"),
			breaks: "GROUP_AUTHORIZATION_FAILED"},
		{acl: find(kmsg.ACLResourceTypeTopic, kmsg.ACLOperationDescribe, "e2e-input"),
			check: func(ctx context.Context, addr string) error { return checkMissingSource(ctx, addr, app, true) }},
		{acl: find(kmsg.ACLResourceTypeTopic, kmsg.ACLOperationCreate, exactNoCreateGroup+"-"),
			check: func(ctx context.Context, addr string) error {
				return checkCreationRefused(ctx, addr, r.Broker.Bootstrap, app)
			}},
		{acl: find(kmsg.ACLResourceTypeGroup, kmsg.ACLOperationRead, exactSrcGroup), breaks: "GROUP_AUTHORIZATION_FAILED",
			check: func(ctx context.Context, addr string) error {
				// The group's first heartbeat starts its anchor member,
				// which the broker refuses.
				_, err := streamsJoinThrough(ctx, addr, app, exactSrcGroup, "anchor-1")
				return err
			}},
	}
	// With every row, the source topic is found (the control case).
	p, err := startSS2(ctx, r, bin, upstreamAddr, env, app, "all")
	if err != nil {
		return err
	}
	err = checkMissingSource(ctx, p.listen, app, false)
	p.stop()
	if err != nil {
		return fmt.Errorf("with every ACL: %w", err)
	}
	for i, tc := range cases {
		name := tc.acl.String()
		del := kadm.NewACLs().Allow("User:ss2").AllowHosts().Operations(kadm.ACLOperation(tc.acl.Operation)).ResourcePatternType(kadm.ACLPattern(tc.acl.Pattern))
		switch tc.acl.Resource {
		case kmsg.ACLResourceTypeTopic:
			del = del.Topics(tc.acl.Name)
		case kmsg.ACLResourceTypeGroup:
			del = del.Groups(tc.acl.Name)
		case kmsg.ACLResourceTypeTransactionalId:
			del = del.TransactionalIDs(tc.acl.Name)
		}
		if _, err := adm.DeleteACLs(ctx, del); err != nil {
			return fmt.Errorf("delete %s: %w", name, err)
		}
		if err := waitACLs(ctx, r.Broker.Bootstrap, "User:ss2", len(rows)-1); err != nil {
			return err
		}
		err := func() error {
			if tc.before != nil {
				if err := tc.before(ctx); err != nil {
					return err
				}
			}
			p, err := startSS2(ctx, r, bin, upstreamAddr, env, app, strconv.Itoa(i))
			if tc.startFails {
				if err == nil {
					p.stop()
					return fmt.Errorf("without %s streamshift started", name)
				}
				dir := filepath.Join(r.Dir, "ss2-"+strconv.Itoa(i))
				if err := checkLogHas(dir, tc.breaks, name); err != nil {
					return err
				}
				return checkLogHas(dir, name, name)
			}
			if err != nil {
				return err
			}
			defer p.stop()
			if tc.notNeeded {
				if err := p.waitLog(ctx, "ACL check: not needed, the topic exists", 30*time.Second); err != nil {
					return err
				}
				if err := p.waitLog(ctx, "has the ACLs of the durable group log", 30*time.Second); err != nil {
					return err
				}
				return checkLogHasNot(p.dir, `"level":"warn"`, `"acl":"`+name+`"`)
			}
			if tc.check != nil {
				if err := tc.check(ctx, p.listen); err != nil {
					return err
				}
			}
			if tc.breaks != "" {
				if err := p.waitLog(ctx, tc.breaks, 30*time.Second); err != nil {
					return err
				}
			}
			if tc.acl.Resource == kmsg.ACLResourceTypeTopic && tc.acl.Pattern == kmsg.ACLResourcePatternTypeLiteral && tc.acl.Feature == upstream.FeatureStreams {
				return nil // a source topic's name is not known to ask about
			}
			// The start-up check (the durable log's rows) or the group's
			// first-serve check (its own) named it.
			return p.waitLog(ctx, `"acl":"`+name+`"`, 30*time.Second)
		}()
		if err != nil {
			return fmt.Errorf("without %s: %w", name, err)
		}
		switch {
		case tc.notNeeded:
			r.T.Logf("without %s: not needed (the topic exists), streamshift starts and its start-up check says so", name)
		default:
			r.T.Logf("without %s: %s", name, map[bool]string{true: "streamshift does not start, and its start-up check named it", false: "it breaks as the table says"}[tc.startFails])
		}
		if err := grantBuilders(ctx, r.Broker.Bootstrap, []*kadm.ACLBuilder{builder(tc.acl)}); err != nil {
			return err
		}
		if err := waitACLs(ctx, r.Broker.Bootstrap, "User:ss2", len(rows)); err != nil {
			return err
		}
	}
	return nil
}

// startSS2 starts one streamshift as ss2 in dir ss2-<name>.
func startSS2(ctx context.Context, r *harness.Run, bin, upstreamAddr string, env []string, probe sasl.Mechanism, name string) (*streamshiftProc, error) {
	dir := filepath.Join(r.Dir, "ss2-"+name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ports, err := harness.FreePorts(3)
	if err != nil {
		return nil, err
	}
	listen := "127.0.0.1:" + strconv.Itoa(ports[0])
	p := &streamshiftProc{t: r.T, bin: bin, dir: dir, listen: listen, probe: []kgo.Opt{kgo.SASL(probe)},
		env: append(append([]string{}, env...), "STREAMSHIFT_CLUSTER_LISTEN=127.0.0.1:"+strconv.Itoa(ports[2])),
		args: []string{"run", "--upstream", upstreamAddr, "--listen", listen, "--node-port-base", strconv.Itoa(ports[1] - 1),
			"--node-id-min", "1", "--node-id-max", "1", "--admin-listen", "", "--proxy-id", "ss2-" + name, "--log-level", "debug"}}
	sctx, cancel := context.WithTimeout(ctx, 40*time.Second)
	defer cancel()
	if err := p.start(sctx); err != nil {
		return nil, err
	}
	r.T.Cleanup(p.stop)
	return p, nil
}

// checkLogHas finds s in a streamshift log of dir; what names the case.
func checkLogHas(dir, s, what string) error {
	logs, _ := filepath.Glob(filepath.Join(dir, "streamshift-*.log"))
	for _, f := range logs {
		b, err := os.ReadFile(f)
		if err == nil && strings.Contains(string(b), s) {
			return nil
		}
	}
	return fmt.Errorf("without %s: no %q in the logs of %s", what, s, dir)
}

// checkMissingSource joins exactSrcGroup through addr until the group's
// status says whether its source topic is missing (MISSING_SOURCE_TOPICS,
// status code 1) as want says.
func checkMissingSource(ctx context.Context, addr string, m sasl.Mechanism, want bool) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var last *kmsg.StreamsGroupHeartbeatResponse
	for i := 1; ctx.Err() == nil; i++ {
		jr, err := streamsJoinThrough(ctx, addr, m, exactSrcGroup, "src-"+strconv.Itoa(i))
		if err == nil && jr.ErrorCode == 0 {
			missing := false
			for _, s := range jr.Status {
				missing = missing || s.StatusCode == 1
			}
			if missing == want {
				return nil
			}
			last = jr
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("%s: MISSING_SOURCE_TOPICS %t never seen; last answer %+v", exactSrcGroup, want, last)
}

// checkProxyOnly starts streamshift as ss0 (no ACL), without the durable
// log, and produces and consumes through it in a consumer group as the app.
func checkProxyOnly(ctx context.Context, r *harness.Run, bin, upstreamAddr string, env []string, app sasl.Mechanism) error {
	env = append(env, "STREAMSHIFT_COORDINATOR_DURABLE_LOG=false")
	p, err := startSS2(ctx, r, bin, upstreamAddr, env, app, "proxy-only")
	if err != nil {
		return err
	}
	defer p.stop()
	const topic = "e2e-acl-plain"
	cl, err := kgo.NewClient(kgo.SeedBrokers(p.listen), kgo.SASL(app), kgo.DefaultProduceTopic(topic), kgo.ConsumeTopics(topic),
		kgo.ConsumerGroup(topic+"-group"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, topic); err != nil {
		return fmt.Errorf("create %s through streamshift: %w", topic, err)
	}
	const n = 20
	for i := range n {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(strconv.Itoa(i))}).FirstErr(); err != nil {
			return fmt.Errorf("produce through streamshift: %w", err)
		}
	}
	seen := map[string]bool{}
	for len(seen) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return fmt.Errorf("consumed %d of %d through streamshift: %w", len(seen), n, ctx.Err())
		}
		if err := fs.Err0(); err != nil {
			return fmt.Errorf("fetch through streamshift: %w", err)
		}
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
	}
	if err := cl.CommitUncommittedOffsets(ctx); err != nil {
		return fmt.Errorf("commit through streamshift: %w", err)
	}
	return checkLogHasNot(p.dir, "AUTHORIZATION_FAILED")
}

// checkLogHasNot fails naming the line of a streamshift log of dir with
// every one of s.
func checkLogHasNot(dir string, s ...string) error {
	logs, _ := filepath.Glob(filepath.Join(dir, "streamshift-*.log"))
	for _, f := range logs {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(b), "\n") {
			if line != "" && !slices.ContainsFunc(s, func(s string) bool { return !strings.Contains(line, s) }) {
				return fmt.Errorf("%s: %s", f, line)
			}
		}
	}
	return nil
}

// checkCreationRefused joins exactNoCreateGroup through addr until the
// group's status says its changelog's creation failed, and checks the topic
// does not exist.
func checkCreationRefused(ctx context.Context, addr, super string, m sasl.Mechanism) error {
	changelog := exactNoCreateGroup + "-store-changelog"
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var last *kmsg.StreamsGroupHeartbeatResponse
	for i := 1; ctx.Err() == nil; i++ {
		jr, err := streamsJoinThrough(ctx, addr, m, exactNoCreateGroup, "nc-"+strconv.Itoa(i))
		if err == nil && jr.ErrorCode == 0 {
			last = jr
			for _, s := range jr.Status {
				if s.StatusCode == 3 && strings.Contains(s.StatusDetail, "Creation failed: "+changelog+" (") {
					sc, err := kgo.NewClient(kgo.SeedBrokers(super))
					if err != nil {
						return err
					}
					defer sc.Close()
					topics, err := kadm.NewClient(sc).ListTopics(ctx, changelog)
					if err != nil {
						return err
					}
					if topics.Has(changelog) {
						return fmt.Errorf("%s exists", changelog)
					}
					return nil
				}
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("%s: no MISSING_INTERNAL_TOPICS with a failed creation of %s; last answer %+v", exactNoCreateGroup, changelog, last)
}

// namingACLs wraps steps: a step's failure carries the streamshift log
// lines of the run that name a refused authorization or a missing ACL (the
// resource is in them).
func namingACLs(steps []harness.Step) []harness.Step {
	out := make([]harness.Step, len(steps))
	for i, st := range steps {
		do := st.Do
		st.Do = func(ctx context.Context, r *harness.Run) error {
			err := do(ctx, r)
			if err != nil {
				if aerr := checkNoAuthorizationFailure(r.Dir); aerr != nil {
					return fmt.Errorf("%w; %v", err, aerr)
				}
			}
			return err
		}
		out[i] = st
	}
	return out
}

// deleteTopicGone deletes topic and waits until the broker no longer has
// it.
func deleteTopicGone(ctx context.Context, adm *kadm.Client, topic string) error {
	if _, err := adm.DeleteTopic(ctx, topic); err != nil {
		return fmt.Errorf("delete %s: %w", topic, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		td, err := adm.ListTopics(ctx, topic)
		if err == nil && (td[topic].Err != nil || len(td[topic].Partitions) == 0) {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s still there after its deletion", topic)
}
