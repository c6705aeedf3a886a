//go:build e2e

package scenarios

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/e2e/harness"
)

// The issue-6 script: Kafka Streams 4.4 apps with group.protocol=streams,
// exactly-once, under continuous input: 1 instance, then 3, then one standby
// per task set with kafka-configs, then kill -9 one; Interactive Queries
// metadata, kafka-streams-groups and kafka-consumer-groups checked on the
// way; the output verified exactly at the end. TestStreamsProxy39 runs it
// through streamshift in front of Kafka 3.9 (which has never heard of streams
// groups), TestStreamsNativeScript44 against Kafka 4.4's own coordinator, so
// the step timings compare (BENCHMARKS.md).

const (
	streamsApp        = "e2e-count"
	repartitionTopic  = "e2e-count-by-value-repartition"
	changelogTopic    = "e2e-count-counts-changelog"
	scriptPartitions  = 4
	sessionTimeout    = 10 * time.Second // streams.session.timeout.ms of both runs
	heartbeatInterval = 5 * time.Second  // Kafka's default streams.heartbeat.interval.ms
	// The apps report their task sets by polling every 100 ms: a task seen on
	// two instances for less than this is reporting noise, not double work.
	overlapTolerance = 300 * time.Millisecond
)

// streamsScript runs the steps and keeps what the checks need.
type streamsScript struct {
	t       *testing.T
	proxied bool

	mu      sync.Mutex
	started []string
	ends    map[string]time.Time // killed instances
	servers map[string]string    // application.server per instance
	notes   []string             // check results for the log and BENCHMARKS.md
}

func newStreamsScript(t *testing.T, proxied bool) *streamsScript {
	return &streamsScript{t: t, proxied: proxied, ends: map[string]time.Time{}, servers: map[string]string{}}
}

func (s *streamsScript) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.mu.Lock()
	s.notes = append(s.notes, msg)
	s.mu.Unlock()
	s.t.Log(msg)
}

// start launches instances, each with its own application.server.
func (s *streamsScript) start(ctx context.Context, r *harness.Run, names ...string) error {
	for _, n := range names {
		s.mu.Lock()
		server := fmt.Sprintf("127.0.0.1:%d", 17001+len(s.servers))
		s.servers[n] = server
		s.started = append(s.started, n)
		s.mu.Unlock()
		if _, err := r.StartAppWith(n, func(o *harness.AppOptions) { o.ApplicationServer = server }); err != nil {
			return err
		}
	}
	return nil
}

// live are the started instances not killed.
func (s *streamsScript) live() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, n := range s.started {
		if _, dead := s.ends[n]; !dead {
			out = append(out, n)
		}
	}
	return out
}

// events are all events of every started instance.
func (s *streamsScript) events(r *harness.Run) []harness.Event {
	s.mu.Lock()
	names := append([]string(nil), s.started...)
	s.mu.Unlock()
	var evs []harness.Event
	for _, n := range names {
		if a, err := r.App(n); err == nil {
			evs = append(evs, a.Events()...)
		}
	}
	return evs
}

// toolBootstrap is where the admin tools connect: the proxy when there is one.
func toolBootstrap(r *harness.Run) string { return r.AppBootstrap }

func (s *streamsScript) steps() []harness.Step {
	return []harness.Step{
		{Name: "start a1", Do: func(ctx context.Context, r *harness.Run) error { return s.start(ctx, r, "a1") }},
		{Name: "start a2,a3 (1 → 3)", Do: func(ctx context.Context, r *harness.Run) error {
			if err := s.checkInternalTopics(ctx, r); err != nil {
				return fmt.Errorf("step 1 check: %w", err)
			}
			return s.start(ctx, r, "a2", "a3")
		}},
		{Name: "streams.num.standby.replicas=1", Do: func(ctx context.Context, r *harness.Run) error {
			if err := s.checkNoDoubleActive(r); err != nil {
				return fmt.Errorf("step 2 check: %w", err)
			}
			if err := s.checkSpread(r); err != nil {
				return fmt.Errorf("step 2 check: %w", err)
			}
			return s.setStandbys(ctx, r)
		}},
		{Name: "kill -9 a3 (3 → 2)", Do: func(ctx context.Context, r *harness.Run) error {
			if err := s.waitStandbys(ctx, r, 30*time.Second); err != nil {
				return fmt.Errorf("step 3 check: %w", err)
			}
			if err := s.waitIQ(ctx, r, 20*time.Second); err != nil {
				return fmt.Errorf("step 5 check (3 instances): %w", err)
			}
			s.mu.Lock()
			s.ends["a3"] = time.Now()
			s.mu.Unlock()
			return r.Kill9("a3")
		}},
		{Name: "checks: failover, IQ, tools", Do: func(ctx context.Context, r *harness.Run) error {
			if err := s.checkFailover(r); err != nil {
				return fmt.Errorf("step 4 check: %w", err)
			}
			if err := s.checkNoDoubleActive(r); err != nil {
				return fmt.Errorf("step 4 check: %w", err)
			}
			if err := s.waitIQ(ctx, r, 20*time.Second); err != nil {
				return fmt.Errorf("step 5 check (2 instances): %w", err)
			}
			if err := s.checkLagTools(ctx, r); err != nil {
				return fmt.Errorf("step 6 check: %w", err)
			}
			if err := s.checkStreamsGroupsTool(ctx, r); err != nil {
				return fmt.Errorf("step 7 check: %w", err)
			}
			return nil
		}},
	}
}

// Step 1: the repartition and changelog topics exist upstream with the
// input's partition count.
func (s *streamsScript) checkInternalTopics(ctx context.Context, r *harness.Run) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(r.Broker.Bootstrap))
	if err != nil {
		return err
	}
	defer cl.Close()
	td, err := kadm.NewClient(cl).ListTopics(ctx, repartitionTopic, changelogTopic)
	if err != nil {
		return fmt.Errorf("list internal topics: %w", err)
	}
	for _, name := range []string{repartitionTopic, changelogTopic} {
		d, ok := td[name]
		if !ok || d.Err != nil {
			return fmt.Errorf("internal topic %s missing upstream (%v)", name, d.Err)
		}
		if len(d.Partitions) != scriptPartitions {
			return fmt.Errorf("internal topic %s has %d partitions, want %d", name, len(d.Partitions), scriptPartitions)
		}
	}
	s.note("step 1: %s and %s created with %d partitions", repartitionTopic, changelogTopic, scriptPartitions)
	return nil
}

// Step 2 (and after the kill): no task active on two instances at any
// moment, from every instance's task reports since the start.
func (s *streamsScript) checkNoDoubleActive(r *harness.Run) error {
	s.mu.Lock()
	ends := make(map[string]time.Time, len(s.ends))
	for k, v := range s.ends {
		ends[k] = v
	}
	s.mu.Unlock()
	ov := harness.ActiveOverlaps(s.events(r), ends, time.Now())
	longest := time.Duration(0)
	if len(ov) > 0 {
		longest = ov[0].Dur
	}
	s.note("no double-active check: %d overlaps in task reports, longest %s (tolerance %s for 100 ms polling)", len(ov), longest.Round(time.Millisecond), overlapTolerance)
	if len(ov) > 0 && ov[0].Dur > overlapTolerance {
		return fmt.Errorf("%s", ov[0])
	}
	return nil
}

// Step 2: 8 tasks on 3 instances: 3/3/2.
func (s *streamsScript) checkSpread(r *harness.Run) error {
	a := r.Tracker.Assignment()
	counts := map[string]int{}
	lo, hi := 1<<30, 0
	for _, n := range s.live() {
		c := len(a[n])
		counts[n] = c
		lo, hi = min(lo, c), max(hi, c)
	}
	if hi-lo > 1 {
		return fmt.Errorf("tasks not spread evenly: %v", counts)
	}
	s.note("step 2: active tasks per instance %v", counts)
	return nil
}

// Step 3: kafka-configs sets one standby per task, through the proxy when
// there is one, and --describe shows it.
func (s *streamsScript) setStandbys(ctx context.Context, r *harness.Run) error {
	boot := toolBootstrap(r)
	if _, err := harness.RunTool(ctx, r.Dir, "kafka-configs", "--bootstrap-server", boot, "--entity-type", "groups",
		"--entity-name", streamsApp, "--alter", "--add-config", "streams.num.standby.replicas=1"); err != nil {
		return err
	}
	out, err := harness.RunTool(ctx, r.Dir, "kafka-configs", "--bootstrap-server", boot, "--entity-type", "groups",
		"--entity-name", streamsApp, "--describe")
	if err != nil {
		return err
	}
	if !strings.Contains(out, "streams.num.standby.replicas=1") {
		return fmt.Errorf("kafka-configs --describe does not show the standby setting:\n%s", out)
	}
	s.note("step 3: kafka-configs --describe: %s", firstLineWith(out, "streams.num.standby.replicas"))
	return nil
}

// Step 3: every stateful task has one standby, on another instance than its
// active; stateless ones have none (Kafka places standbys for stateful tasks
// only).
func (s *streamsScript) waitStandbys(ctx context.Context, r *harness.Run, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		why := s.standbyProblem(r)
		if why == "" {
			s.note("step 3: every stateful task has one standby on another instance")
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("standbys not placed after %s: %s", limit, why)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (s *streamsScript) standbyProblem(r *harness.Run) string {
	active, standby := map[string]string{}, map[string][]string{}
	for _, n := range s.live() {
		a, err := r.App(n)
		if err != nil {
			return err.Error()
		}
		act, sb := a.LastTasks()
		for _, t := range act {
			active[t] = n
		}
		for _, t := range sb {
			standby[t] = append(standby[t], n)
		}
	}
	for _, t := range harness.TopologyTasks(scriptPartitions) {
		sb := standby[t]
		// Only stateful tasks get standbys: subtopology 1 (the count).
		stateful := strings.HasPrefix(t, "1_")
		switch {
		case active[t] == "":
			return "task " + t + " not active"
		case !stateful && len(sb) != 0:
			return fmt.Sprintf("stateless task %s has standbys on %v", t, sb)
		case !stateful:
		case len(sb) != 1:
			return fmt.Sprintf("task %s has standbys on %v", t, sb)
		case sb[0] == active[t]:
			return fmt.Sprintf("task %s has its standby on its active instance %s", t, sb[0])
		}
	}
	return ""
}

// Step 5: every live instance's IQ metadata lists every live instance's
// application.server with the partitions of its active and standby tasks.
func (s *streamsScript) waitIQ(ctx context.Context, r *harness.Run, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		why := s.iqProblem(r)
		if why == "" {
			s.note("step 5: IQ metadata correct on %v", s.live())
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("IQ metadata wrong after %s: %s", limit, why)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (s *streamsScript) iqProblem(r *harness.Run) string {
	want := map[string]harness.IQHost{}
	for _, n := range s.live() {
		a, err := r.App(n)
		if err != nil {
			return err.Error()
		}
		act, sb := a.LastTasks()
		ap, err := harness.TaskPartitions(act, "e2e-input", repartitionTopic)
		if err != nil {
			return err.Error()
		}
		sp, err := harness.TaskPartitions(sb, "e2e-input", repartitionTopic)
		if err != nil {
			return err.Error()
		}
		s.mu.Lock()
		want[s.servers[n]] = harness.IQHost{Active: ap, Standby: sp}
		s.mu.Unlock()
	}
	for _, n := range s.live() {
		a, _ := r.App(n)
		var last *harness.Event
		evs := a.Events()
		for i := len(evs) - 1; i >= 0; i-- {
			if evs[i].Kind == "iq" {
				last = &evs[i]
				break
			}
		}
		if last == nil {
			return n + " reported no IQ metadata"
		}
		got, err := harness.ParseIQ(*last)
		if err != nil {
			return err.Error()
		}
		if !reflect.DeepEqual(got, want) {
			return fmt.Sprintf("%s sees %v, want %v", n, got, want)
		}
	}
	return ""
}

// Step 4: the killed instance's tasks move within the session timeout plus
// one heartbeat interval (a survivor learns its new tasks at its next
// heartbeat): every survivor has entered REBALANCING (it got an assignment
// with new tasks to restore) by then. The apps list a task as active only
// once it runs, i.e. after restoring its state, which the step's "all
// running" time includes.
func (s *streamsScript) checkFailover(r *harness.Run) error {
	s.mu.Lock()
	killedAt := s.ends["a3"]
	s.mu.Unlock()
	var assignedAt time.Time
	for _, n := range s.live() {
		a, err := r.App(n)
		if err != nil {
			return err
		}
		var at time.Time
		for _, ev := range a.Events() {
			if ev.Time.After(killedAt) && ev.Kind == "state" && ev.To == "REBALANCING" {
				at = ev.Time
				break
			}
		}
		if at.IsZero() {
			return fmt.Errorf("survivor %s got no new assignment after the kill", n)
		}
		assignedAt = later(assignedAt, at)
	}
	took := assignedAt.Sub(killedAt)
	s.note("step 4: a3's tasks assigned to every survivor %s after the kill (session timeout %s, heartbeat %s)", took.Round(time.Millisecond), sessionTimeout, heartbeatInterval)
	if took > sessionTimeout+heartbeatInterval {
		return fmt.Errorf("a3's tasks moved after %s, more than the session timeout %s + one heartbeat %s", took, sessionTimeout, heartbeatInterval)
	}
	return nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Step 6: the committed offsets are visible upstream to the lag tools,
// against the broker directly. On 3.9 the group is a classic group there
// (the anchor is its member): kafka-consumer-groups reads it. Kafka 4.4
// serves the streams group itself: kafka-streams-groups --offsets.
func (s *streamsScript) checkLagTools(ctx context.Context, r *harness.Run) error {
	var out string
	var err error
	if s.proxied {
		out, err = harness.RunTool(ctx, r.Dir, "kafka-consumer-groups", "--bootstrap-server", r.Broker.Bootstrap,
			"--describe", "--group", streamsApp, "--offsets")
	} else {
		out, err = harness.RunTool(ctx, r.Dir, "kafka-streams-groups", "--bootstrap-server", r.Broker.Bootstrap,
			"--describe", "--group", streamsApp, "--offsets")
	}
	if err != nil {
		return err
	}
	for _, topic := range []string{"e2e-input", repartitionTopic} {
		for p := 0; p < scriptPartitions; p++ {
			if !hasOffsetRow(out, topic, p) {
				return fmt.Errorf("no committed offset of %s-%d in:\n%s", topic, p, out)
			}
		}
	}
	s.note("step 6: committed offsets of e2e-input and %s listed by the lag tool against the broker", repartitionTopic)
	return nil
}

// hasOffsetRow finds a row "<group> <topic> <partition> <offset> ..." with
// a numeric committed offset.
func hasOffsetRow(out, topic string, p int) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		for i := 0; i+2 < len(f); i++ {
			if f[i] == topic && f[i+1] == fmt.Sprint(p) {
				var off int64
				if _, err := fmt.Sscan(f[i+2], &off); err == nil {
					return true
				}
			}
		}
	}
	return false
}

// Step 7: kafka-streams-groups --describe (state and members) through the
// proxy when there is one.
func (s *streamsScript) checkStreamsGroupsTool(ctx context.Context, r *harness.Run) error {
	boot := toolBootstrap(r)
	out, err := harness.RunTool(ctx, r.Dir, "kafka-streams-groups", "--bootstrap-server", boot, "--describe", "--group", streamsApp, "--state")
	if err != nil {
		return err
	}
	if !strings.Contains(out, "Stable") {
		return fmt.Errorf("kafka-streams-groups --describe --state: group not Stable:\n%s", out)
	}
	out, err = harness.RunTool(ctx, r.Dir, "kafka-streams-groups", "--bootstrap-server", boot, "--describe", "--group", streamsApp, "--members")
	if err != nil {
		return err
	}
	members := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), streamsApp+" ") {
			members++
		}
	}
	if members != len(s.live()) {
		return fmt.Errorf("kafka-streams-groups --describe --members lists %d members, want %d:\n%s", members, len(s.live()), out)
	}
	out, err = harness.RunTool(ctx, r.Dir, "kafka-streams-groups", "--bootstrap-server", boot, "--list")
	if err != nil {
		return err
	}
	if !strings.Contains(out, streamsApp) {
		return fmt.Errorf("kafka-streams-groups --list lacks %s:\n%s", streamsApp, out)
	}
	s.note("step 7: kafka-streams-groups --describe --state/--members and --list: Stable, %d members", members)
	return nil
}

func firstLineWith(out, s string) string {
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, s) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// TestStreamsProxy39: the script through streamshift in front of Kafka 3.9,
// with streamshift's streams settings equal to the native broker's test
// settings.
func TestStreamsProxy39(t *testing.T) {
	t.Parallel()
	s := newStreamsScript(t, true)
	harness.RunScenario(t, harness.Scenario{
		Name:          "streams through streamshift on 3.9",
		Broker:        harness.Kafka39,
		AppBuild:      harness.App44,
		GroupProtocol: "streams",
		Guarantee:     "exactly_once_v2",
		Partitions:    scriptPartitions,
		Route:         harness.ProxyRoute(harness.Streams44TestSettings),
		Steps:         s.steps(),
	})
}

// TestStreamsNativeScript44: the same script against Kafka 4.4's own
// streams-group coordinator (the reference for the timings).
func TestStreamsNativeScript44(t *testing.T) {
	harness.NeedBench(t) // a baseline of Kafka alone (BENCHMARKS.md)
	t.Parallel()
	s := newStreamsScript(t, false)
	harness.RunScenario(t, harness.Scenario{
		Name:          "native streams on 4.4 (same script)",
		Broker:        harness.Kafka44,
		AppBuild:      harness.App44,
		GroupProtocol: "streams",
		Guarantee:     "exactly_once_v2",
		Partitions:    scriptPartitions,
		Steps:         s.steps(),
	})
}
