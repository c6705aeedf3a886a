//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/e2e/harness"
)

// migrationRoll tracks the instances of an online-migration run: when each
// stopped (for the overlap check) and every instance started.
type migrationRoll struct {
	mu    sync.Mutex
	ends  map[string]time.Time
	names []string
}

func (m *migrationRoll) start(name, build, protocol string) harness.Step {
	return harness.Step{Name: fmt.Sprintf("start %s (%s, %s)", name, build, protocol), Do: func(ctx context.Context, r *harness.Run) error {
		m.mu.Lock()
		m.names = append(m.names, name)
		m.mu.Unlock()
		_, err := r.StartAppWith(name, func(o *harness.AppOptions) { o.Build, o.GroupProtocol = build, protocol })
		return err
	}}
}

// replace is the roll of one instance to protocol: stop it cleanly, start
// its successor.
func (m *migrationRoll) replace(old, name, protocol string) harness.Step {
	return harness.Step{Name: fmt.Sprintf("roll %s to %s as %s", old, protocol, name), Do: func(ctx context.Context, r *harness.Run) error {
		if err := r.StopApp(old); err != nil {
			return err
		}
		m.mu.Lock()
		m.ends[old] = time.Now()
		m.names = append(m.names, name)
		m.mu.Unlock()
		_, err := r.StartAppWith(name, func(o *harness.AppOptions) { o.GroupProtocol = protocol })
		return err
	}}
}

// check fails on a task active on two instances for longer than the apps'
// reporting noise, and on what the migration must never cause in the apps'
// logs: a task closed dirty, TaskMigratedException, lost tasks, a member
// fenced (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION).
func (m *migrationRoll) check() harness.Step {
	return harness.Step{Name: "no task active on two instances, none closed dirty", Do: func(ctx context.Context, r *harness.Run) error {
		logs, err := filepath.Glob(filepath.Join(r.Dir, "app-*", "app.log"))
		if err != nil {
			return err
		}
		bad := []string{"Closed dirty", "TaskMigratedException", "as lost", "UNKNOWN_MEMBER_ID", "ILLEGAL_GENERATION", "Unknown member", "Illegal generation"}
		clean := 0
		for _, f := range logs {
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			clean += strings.Count(string(b), "Closed clean")
			for _, line := range strings.Split(string(b), "\n") {
				for _, w := range bad {
					if strings.Contains(line, w) {
						return fmt.Errorf("%s: %q in %s", f, w, line)
					}
				}
			}
		}
		r.T.Logf("apps' logs: %d tasks closed clean, none closed dirty, no member fenced", clean)
		var events []harness.Event
		for _, name := range m.names {
			a, err := r.App(name)
			if err != nil {
				return err
			}
			events = append(events, a.Events()...)
		}
		m.mu.Lock()
		ends := map[string]time.Time{}
		for k, v := range m.ends {
			ends[k] = v
		}
		m.mu.Unlock()
		for _, o := range harness.ActiveOverlaps(events, ends, time.Now()) {
			if o.Dur > 500*time.Millisecond {
				return fmt.Errorf("%s", o)
			}
		}
		return nil
	}}
}

// TestStreamsProxyOnlineMigration: three Kafka Streams instances (4.4 with
// group.protocol=classic, and the oldest classic clients supported, 2.8 and
// 3.6, each at its own SubscriptionInfo version) run on the classic protocol through
// streamshift (the group is the upstream's), EOS, under continuous input.
// They are rolled one at a time to 4.4 with group.protocol=streams: the
// first streams member takes the live classic group over (the remaining
// classic members are served by streamshift as classic members of the
// streams group), the last completes the upgrade. Then all are rolled back
// to classic one at a time: classic members join the streams group, then
// the last streams member leaves and the group is handed back to the
// upstream's classic coordinator. The output is verified exactly; no task is
// active on two instances at once; no task is closed dirty and no member
// fenced (from the apps' logs); at the end the upstream group is a classic
// group of the three apps again, without the anchor.
func TestStreamsProxyOnlineMigration(t *testing.T) {
	roll := &migrationRoll{ends: map[string]time.Time{}}
	rep := harness.RunScenario(t, harness.Scenario{
		Name:          "online migration classic → streams → classic through streamshift on 3.9",
		Broker:        harness.Kafka39,
		AppBuild:      harness.App44,
		GroupProtocol: "classic",
		Guarantee:     "exactly_once_v2",
		Hold:          10 * time.Second,
		Route:         throughStreamshift("online"),
		Steps: []harness.Step{
			roll.start("c1", harness.App44, "classic"),
			roll.start("c2", harness.App28, "classic"),
			roll.start("c3", harness.App36, "classic"),
			roll.replace("c1", "s1", "streams"),
			roll.replace("c2", "s2", "streams"),
			roll.replace("c3", "s3", "streams"),
			roll.replace("s1", "c4", "classic"),
			roll.replace("s2", "c5", "classic"),
			roll.replace("s3", "c6", "classic"),
			roll.check(),
			{Name: "handed back: the upstream classic group holds the apps, no anchor", Do: func(ctx context.Context, r *harness.Run) error {
				return checkHandedBack(ctx, r.Broker.Bootstrap, "e2e-count", 3)
			}},
		},
	})
	for i, s := range rep.Steps {
		if s.DirtyClose != 0 {
			t.Errorf("step %d (%s): %d tasks closed dirty", i+1, s.Step, s.DirtyClose)
		}
	}
}

// checkHandedBack: the upstream group is a classic Streams group again (its
// protocol is "stream", not the anchor's), Stable, with n members, none of
// them an anchor, each joined by an app itself.
func checkHandedBack(ctx context.Context, upstream, group string, n int) error {
	g, err := describeUpstream(ctx, upstream, group)
	if err != nil {
		return err
	}
	if g.Protocol != "stream" || g.State != "Stable" || len(g.Members) != n {
		return fmt.Errorf("upstream group %s: state %s protocol %q, %d members; want Stable, stream, %d", group, g.State, g.Protocol, len(g.Members), n)
	}
	for _, m := range g.Members {
		if m.InstanceID != nil && strings.HasPrefix(*m.InstanceID, "streamshift-") {
			return fmt.Errorf("upstream group %s still holds the anchor %s", group, *m.InstanceID)
		}
		// The hand-back's JoinGroups went upstream on the apps' own
		// connections: the broker named the members after the apps'
		// client ids, not after streamshift's control-plane client.
		if m.ClientID == "kgo" || strings.HasPrefix(m.MemberID, "kgo-") || !strings.HasPrefix(m.MemberID, m.ClientID+"-") {
			return fmt.Errorf("upstream group %s: member %s (client id %s) was not joined by the app itself", group, m.MemberID, m.ClientID)
		}
	}
	return nil
}

// describeUpstream describes a group on the broker itself, not through
// streamshift.
func describeUpstream(ctx context.Context, upstream, group string) (kadm.DescribedGroup, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(upstream))
	if err != nil {
		return kadm.DescribedGroup{}, err
	}
	defer cl.Close()
	described, err := kadm.NewClient(cl).DescribeGroups(ctx, group)
	if err != nil {
		return kadm.DescribedGroup{}, err
	}
	return described[group], nil
}

// TestStreamsProxyClassicRollBaseline is the baseline of the online
// migration's roll steps: the same app and input, a classic-only rolling
// bounce of the three instances through streamshift (forwarded, the group is the
// broker's). Compare its report's output gaps with
// TestStreamsProxyOnlineMigration's.
func TestStreamsProxyClassicRollBaseline(t *testing.T) {
	if os.Getenv("STREAMSHIFT_E2E_MIGRATION_BASELINE") != "1" {
		t.Skip("baseline of the online migration: set STREAMSHIFT_E2E_MIGRATION_BASELINE=1")
	}
	roll := &migrationRoll{ends: map[string]time.Time{}}
	harness.RunScenario(t, harness.Scenario{
		Name:          "classic rolling bounce through streamshift on 3.9 (baseline of the online migration)",
		Broker:        harness.Kafka39,
		AppBuild:      harness.App44,
		GroupProtocol: "classic",
		Guarantee:     "exactly_once_v2",
		Hold:          10 * time.Second,
		Route:         throughStreamshift("baseline"),
		Steps: []harness.Step{
			roll.start("c1", harness.App44, "classic"),
			roll.start("c2", harness.App28, "classic"),
			roll.start("c3", harness.App36, "classic"),
			roll.replace("c1", "c4", "classic"),
			roll.replace("c2", "c5", "classic"),
			roll.replace("c3", "c6", "classic"),
			roll.check(),
		},
	})
}
