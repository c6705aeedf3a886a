//go:build e2e

package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/e2e/harness"
	"github.com/streamshift/streamshift/status"
)

// describeStreamsGroup sends StreamsGroupDescribe for group to node 1 (the
// e2e broker's id, which streamshift keeps) through seed: an instance's
// node port, a lone instance's bootstrap or a load balancer's address.
func describeStreamsGroup(ctx context.Context, seed, group string) (kmsg.StreamsGroupDescribeResponseGroup, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seed))
	if err != nil {
		return kmsg.StreamsGroupDescribeResponseGroup{}, err
	}
	defer cl.Close()
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Groups = []string{group}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl.Broker(1))
	if err != nil {
		return kmsg.StreamsGroupDescribeResponseGroup{}, err
	}
	return resp.Groups[0], nil
}

// toolAnswer is one run of a Kafka CLI tool: its output, normalized
// (normalizeToolOutput), and its exit code.
type toolAnswer struct {
	Text string `json:"text"`
	Code int    `json:"code"`
}

// runToolCode runs a Kafka 4.4 CLI tool against bootstrap and returns its
// output and exit code (a non-zero exit is an answer, not a failure).
func runToolCode(ctx context.Context, dir, bootstrap, name string, args ...string) (string, int, error) {
	out, err := harness.RunTool(ctx, dir, name, append([]string{"--bootstrap-server", bootstrap}, args...)...)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out, exit.ExitCode(), nil
	}
	return out, 0, err
}

// toolNoise is what differs between two runs of a tool for groups of the
// same shape: ids, hosts, numbers (offsets, lags, epochs, counts), the
// group's name (G) and the column padding.
var toolNoise = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "UUID"},
	{regexp.MustCompile(`/?\d+\.\d+\.\d+\.\d+(:\d+)?`), "HOST"},
	{regexp.MustCompile(`\b\d+\b`), "N"},
	{regexp.MustCompile(`[ \t]+`), " "},
	// A lag's sign: Kafka's StreamsGroupCommand reads the end offsets,
	// then the committed ones, so an app committing in between (input
	// flows throughout) shows a negative lag, through streamshift or on
	// Kafka alike.
	{regexp.MustCompile(`(^| )-N( |$)`), "${1}N${2}"},
}

// idRun is a run of the characters of a base64 Uuid.
var idRun = regexp.MustCompile(`[A-Za-z0-9_-]+`)

// normalizeToolOutput is a tool's output with group written G and the
// noise (toolNoise) replaced, its lines trimmed, sorted (members and
// partitions come in any order) and without the JVM's warnings.
func normalizeToolOutput(out, group string) string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.ReplaceAll(l, group, "G")
		l = toolNoise[0].re.ReplaceAllString(l, toolNoise[0].with)
		// A streams member id (a base64 Uuid) is a run of 22.
		l = idRun.ReplaceAllStringFunc(l, func(run string) string {
			if len(run) == 22 {
				return "ID"
			}
			return run
		})
		for _, n := range toolNoise[1:] {
			l = n.re.ReplaceAllString(l, n.with)
		}
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "WARNING") || strings.Contains(l, "SLF4J") {
			continue
		}
		lines = append(lines, l)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// The tool runs compared, each with G for the group (a JVM start each,
// 3 to 20 s on a loaded machine: each group type gets the runs whose
// answers differ by type). On a classic Kafka Streams group
// kafka-consumer-groups describes it and kafka-streams-groups fails (its
// --members and --state fail the same way); on a streams group the
// reverse.
var (
	classicToolRuns = [][]string{
		{"kafka-consumer-groups", "--describe", "--group", "G"},
		{"kafka-consumer-groups", "--describe", "--group", "G", "--members"},
		{"kafka-consumer-groups", "--describe", "--group", "G", "--state"},
		{"kafka-streams-groups", "--describe", "--group", "G"},
	}
	streamsToolRuns = [][]string{
		{"kafka-consumer-groups", "--describe", "--group", "G"},
		{"kafka-streams-groups", "--describe", "--group", "G"},
		{"kafka-streams-groups", "--describe", "--group", "G", "--members"},
		{"kafka-streams-groups", "--describe", "--group", "G", "--state"},
	}
	// After the hand-back the group is classic on the broker again, as
	// before the takeover, where every run was compared.
	handedBackToolRuns = [][]string{
		{"kafka-consumer-groups", "--describe", "--group", "G"},
		{"kafka-streams-groups", "--describe", "--group", "G"},
	}
)

// groupToolAnswers runs runs for group, and with lists the two --list: for
// each list, whether the group is in it.
func groupToolAnswers(ctx context.Context, t *testing.T, dir, bootstrap, group string, runs [][]string, lists bool) map[string]toolAnswer {
	t.Helper()
	got := map[string]toolAnswer{}
	for _, run := range runs {
		args := slices.Clone(run[1:])
		for i, a := range args {
			if a == "G" {
				args[i] = group
			}
		}
		out, code, err := runToolCode(ctx, dir, bootstrap, run[0], args...)
		if err != nil {
			t.Fatal(err)
		}
		got[strings.Join(run, " ")] = toolAnswer{Text: normalizeToolOutput(out, group), Code: code}
	}
	for _, name := range []string{"kafka-consumer-groups", "kafka-streams-groups"} {
		if !lists {
			break
		}
		out, code, err := runToolCode(ctx, dir, bootstrap, name, "--list")
		if err != nil {
			t.Fatal(err)
		}
		listed := slices.Contains(strings.Fields(out), group)
		got[name+" --list"] = toolAnswer{Text: fmt.Sprintf("G listed: %v", listed), Code: code}
	}
	return got
}

// compareToolAnswers reports every tool run whose answer through
// streamshift differs from Kafka 4.4's for a group of the same type.
func compareToolAnswers(t *testing.T, phase string, got, want map[string]toolAnswer) {
	t.Helper()
	keys := slices.Sorted(maps.Keys(got))
	for _, k := range keys {
		g, w := got[k], want[k]
		if g != w {
			t.Errorf("%s: `%s` through streamshift answers (exit %d)\n%s\nKafka 4.4 answers (exit %d)\n%s", phase, k, g.Code, g.Text, w.Code, w.Text)
		} else {
			t.Logf("%s: `%s` answers as Kafka 4.4 (exit %d)\n%s", phase, k, g.Code, g.Text)
		}
	}
}

// kafka44ToolAnswersFile holds Kafka 4.4's answers to the tool runs
// (normalized, normalizeToolOutput), recorded against a real Kafka 4.4
// broker with real Kafka Streams 4.4 apps: a JVM broker, two apps and 12
// tool runs less in each run of the suite. Record them anew with
//
//	STREAMSHIFT_E2E_TOOLS_RECORD=1 go test -tags e2e -run 'TestGroupToolsMigration$' ./e2e/
//
// after a change of the runs or of their normalization.
const kafka44ToolAnswersFile = "testdata/group-tools-kafka-4.4.json"

// kafka44ToolAnswers: a classic Kafka Streams group's answers, and a
// streams group's, each by tool run.
type kafka44ToolAnswers struct {
	Classic map[string]toolAnswer `json:"classic"`
	Streams map[string]toolAnswer `json:"streams"`
}

// TestGroupToolsMigration runs Kafka's 4.4 group tools (kafka-consumer-groups
// --describe [--members|--state] and --list, kafka-streams-groups --describe
// [--members|--state] and --list, classicToolRuns and streamsToolRuns) on a
// Kafka Streams group through each phase of an online migration through
// streamshift on Kafka 3.9: classic on the broker (observed), taken over (a
// streams group, its classic member gone) and handed back (classic again).
// Each answer, text (modulo ids, hosts, numbers and padding) and exit code,
// is the answer of a Kafka 4.4 broker for a group of the same type and
// shape: a classic Kafka Streams group, and a streams group. While the
// group is classic on the broker, the status page lists it, observed, in
// headless Chromium; once taken over, its active tasks' lag is measured.
func TestGroupToolsMigration(t *testing.T) {
	t.Parallel()
	if err := harness.CheckBuilt("app-4.4", "tools-4.4", "broker-4.4", "broker-3.9"); err != nil {
		t.Fatal(err)
	}
	dir, err := harness.OutDir(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	// 12 tool runs and 3 app starts (24 and 5 when recording).
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	// Kafka 4.4's answers are recorded (kafka44ToolAnswersFile); with
	// STREAMSHIFT_E2E_TOOLS_RECORD=1 a Kafka 4.4 broker beside answers
	// them anew, and the file is rewritten.
	record := os.Getenv("STREAMSHIFT_E2E_TOOLS_RECORD") == "1"
	var b39, b44 *harness.Broker
	var err39, err44 error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		b39, err39 = harness.StartBroker(ctx, harness.BrokerOptions{Version: harness.Kafka39, Dir: filepath.Join(dir, "broker-3.9")})
	}()
	if record {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b44, err44 = harness.StartBroker(ctx, harness.BrokerOptions{Version: harness.Kafka44, Dir: filepath.Join(dir, "broker-4.4")})
		}()
	}
	wg.Wait()
	for _, b := range []*harness.Broker{b39, b44} {
		if b != nil {
			t.Cleanup(func() { _ = b.Stop() })
		}
	}
	if err := errors.Join(err39, err44); err != nil {
		t.Fatal(err)
	}
	chromium := needChromium(t)
	adminPort, err := harness.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	admin := "127.0.0.1:" + strconv.Itoa(adminPort[0])
	proxy, stop := startStreamshift(ctx, t, dir, b39.Bootstrap, "tools", append(slices.Clone(nativeTestSettings), "STREAMSHIFT_ADMIN_LISTEN="+admin)...)
	defer stop()
	const input, output = "tools-input", "tools-output"
	brokers := []string{b39.Bootstrap}
	if record {
		brokers = append(brokers, b44.Bootstrap)
	}
	for _, b := range brokers {
		if err := harness.CreateTopics(ctx, b, 2, input, output); err != nil {
			t.Fatal(err)
		}
		p, err := harness.StartProducer(harness.ProducerOptions{Bootstrap: b, Topic: input, Rate: 20})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = p.Stop() }()
	}
	start := func(name, bootstrap, appID, protocol string) *harness.App {
		t.Helper()
		app, err := harness.StartApp(harness.AppOptions{Name: name, Build: harness.App44, Dir: filepath.Join(dir, "app-"+name), Bootstrap: bootstrap,
			ApplicationID: appID, Input: input, Output: output, GroupProtocol: protocol})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = app.Stop() })
		// Running with tasks: the app prints its tasks when they change,
		// read while it may still be REBALANCING, and its state when that
		// changes, so the two come in either order (a tasks event alone,
		// RUNNING, may never come).
		active, running := false, false
		if _, err := app.WaitEvent(ctx, func(e harness.Event) bool {
			switch e.Kind {
			case "tasks":
				active, running = len(e.Active) > 0, e.State == "RUNNING"
			case "state":
				running = e.To == "RUNNING"
			}
			return active && running
		}); err != nil {
			t.Fatalf("%s never ran a task (log %s): %v", name, app.Log, err)
		}
		return app
	}

	// Kafka 4.4's answers: a classic Kafka Streams group, a streams group.
	var k44 kafka44ToolAnswers
	if record {
		start("k-classic", b44.Bootstrap, "tools-classic", "classic")
		start("k-streams", b44.Bootstrap, "tools-streams", "streams")
		k44.Classic = groupToolAnswers(ctx, t, dir, b44.Bootstrap, "tools-classic", classicToolRuns, true)
		k44.Streams = groupToolAnswers(ctx, t, dir, b44.Bootstrap, "tools-streams", streamsToolRuns, true)
		data, err := json.MarshalIndent(k44, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(kafka44ToolAnswersFile, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("Kafka 4.4's answers recorded in %s", kafka44ToolAnswersFile)
	} else {
		data, err := os.ReadFile(kafka44ToolAnswersFile)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &k44); err != nil {
			t.Fatalf("%s: %v", kafka44ToolAnswersFile, err)
		}
	}
	classic, streamsGroup := k44.Classic, k44.Streams

	// Through streamshift: the same app id through the migration.
	const group = "tools-migrated"
	c1 := start("c1", proxy, group, "classic")
	compareToolAnswers(t, "classic on the broker, observed", groupToolAnswers(ctx, t, dir, proxy, group, classicToolRuns, true), classic)
	checkObservedStatusPage(ctx, t, chromium, admin, group, dir)
	s1 := start("s1", proxy, group, "streams")
	if err := c1.Stop(); err != nil {
		t.Fatal(err)
	}
	waitStreamsMembers(ctx, t, proxy, group, 1)
	compareToolAnswers(t, "taken over, a streams group", groupToolAnswers(ctx, t, dir, proxy, group, streamsToolRuns, true), streamsGroup)
	checkMeasuredLag(ctx, t, admin, group)
	start("c2", proxy, group, "classic")
	if err := s1.Stop(); err != nil {
		t.Fatal(err)
	}
	waitHandedBack(ctx, t, proxy, group)
	waitUpstreamStable(ctx, t, b39.Bootstrap, group, 1)
	compareToolAnswers(t, "handed back, classic on the broker", groupToolAnswers(ctx, t, dir, proxy, group, handedBackToolRuns, false), classic)
}

// waitStreamsMembers waits until streamshift serves group with n members,
// all on the streams protocol, and the group is Stable.
func waitStreamsMembers(ctx context.Context, t *testing.T, proxy, group string, n int) {
	t.Helper()
	for {
		g, err := describeStreamsGroup(ctx, proxy, group)
		if err == nil && g.ErrorCode == 0 && g.State == "Stable" && len(g.Members) == n && !slices.ContainsFunc(g.Members, func(m kmsg.StreamsGroupDescribeResponseGroupMember) bool { return m.IsClassic }) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never had %d streams members alone, Stable (last %+v, %v)", group, n, g, err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// waitHandedBack waits until streamshift no longer serves group.
func waitHandedBack(ctx context.Context, t *testing.T, proxy, group string) {
	t.Helper()
	for {
		g, err := describeStreamsGroup(ctx, proxy, group)
		if err == nil && g.ErrorCode != 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never handed back (last %+v, %v)", group, g, err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// checkObservedStatusPage: while the group is classic on the broker, the
// status page lists it from its first classic join, marked "observed,
// classic on the broker", with its member labelled host/processUUID[:8]
// thread N, the tasks decoded from its classic assignment and their lag
// measured (committed against end offsets); loaded in headless Chromium
// (screenshot ui-observed.png in the test's folder).
func checkObservedStatusPage(ctx context.Context, t *testing.T, chromium, admin, group, dir string) {
	t.Helper()
	var g status.Group
	for {
		body, code, err := httpGet(ctx, "http://"+admin+"/api/groups/"+group)
		if err == nil && code == 200 && json.Unmarshal(body, &g) == nil && g.Observed != "" && len(g.Members) > 0 && g.Members[0].Lag != nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("/api/groups/%s never showed the observed classic group with a measured lag (last %d %v: %s)", group, code, err, body)
		case <-time.After(500 * time.Millisecond):
		}
	}
	m := g.Members[0]
	if g.Served || m.Protocol != "classic" || !regexp.MustCompile(`^[^/]+/[0-9a-f]{8} thread \d+$`).MatchString(m.Label) || len(m.Active) == 0 || m.LagSource != "measured" {
		t.Fatalf("observed group %+v, member %+v", g, m)
	}
	url := "http://" + admin + "/ui"
	dom, err := chromiumDOM(ctx, chromium, url)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-group="` + group + `" data-served="false" data-observed="observed, classic on the broker"`, m.Label,
		`data-member="` + m.MemberID + `" data-protocol="classic"`, `data-task="` + m.Active[0] + `"`, `data-source="measured"`} {
		if !strings.Contains(dom, want) {
			t.Fatalf("/ui's DOM lacks %s", want)
		}
	}
	shot := filepath.Join(dir, "ui-observed.png")
	if err := chromiumScreenshot(ctx, chromium, url, shot); err != nil {
		t.Fatal(err)
	}
	t.Logf("status page in headless Chromium: observed classic group %s, member %s (%s) tasks %v lag %d measured; screenshot %s",
		group, m.Label, m.MemberID, m.Active, *m.Lag, shot)
}

// checkMeasuredLag: once streamshift serves the group, a streams member's
// running active tasks have their lag measured (committed against end
// offsets), not taken from its last offset report.
func checkMeasuredLag(ctx context.Context, t *testing.T, admin, group string) {
	t.Helper()
	var g status.Group
	for {
		body, code, err := httpGet(ctx, "http://"+admin+"/api/groups/"+group)
		if err == nil && code == 200 && json.Unmarshal(body, &g) == nil && g.Served && len(g.Members) == 1 && g.Members[0].Lag != nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("/api/groups/%s never showed its streams member with a lag (last %d %v: %s)", group, code, err, body)
		case <-time.After(500 * time.Millisecond):
		}
	}
	for _, tl := range g.Members[0].Tasks {
		if tl.Kind == "active" && tl.Source != "measured" {
			t.Fatalf("active task %s of the streams member: lag %v from %q, want measured", tl.Task, tl.Lag, tl.Source)
		}
	}
	t.Logf("streams member %s (%s): lag %d, active tasks measured", g.Members[0].Label, g.Members[0].MemberID, *g.Members[0].Lag)
}

// waitUpstreamStable waits until the upstream's classic group is Stable
// with n members.
func waitUpstreamStable(ctx context.Context, t *testing.T, upstream, group string, n int) {
	t.Helper()
	for {
		g, err := describeUpstream(ctx, upstream, group)
		if err == nil && g.State == "Stable" && len(g.Members) == n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the upstream's %s never Stable with %d members (last %s, %d members, %v)", group, n, g.State, len(g.Members), err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}
