//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/streamshift/streamshift/e2e/harness"
)

// migrationRoll tracks the instances of an online-migration run: when each
// stopped (for the overlap check) and every instance started.
type migrationRoll struct {
	mu    sync.Mutex
	ends  map[string]time.Time
	names []string
}

func (m *migrationRoll) start(name, protocol string) harness.Step {
	return harness.Step{Name: fmt.Sprintf("start %s (%s)", name, protocol), Do: func(ctx context.Context, r *harness.Run) error {
		m.mu.Lock()
		m.names = append(m.names, name)
		m.mu.Unlock()
		_, err := r.StartAppWith(name, func(o *harness.AppOptions) { o.GroupProtocol = protocol })
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
// reporting noise.
func (m *migrationRoll) check() harness.Step {
	return harness.Step{Name: "no task active on two instances", Do: func(ctx context.Context, r *harness.Run) error {
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

// TestStreamsProxyOnlineMigration: two Kafka Streams 4.4 instances run on the
// classic protocol through streamshift (the group is the upstream's), EOS,
// under continuous input. They are rolled one at a time to
// group.protocol=streams: the first streams member takes the live classic
// group over (the remaining classic member is served by streamshift as a
// classic member of the streams group), the second completes the upgrade.
// Then one instance is rolled back to classic (a classic member joining a
// streams group). The output is verified exactly; no task is active on two
// instances at once, and no task is closed dirty.
//
// Set STREAMSHIFT_E2E_MIGRATION=1 to run it.
func TestStreamsProxyOnlineMigration(t *testing.T) {
	if os.Getenv("STREAMSHIFT_E2E_MIGRATION") != "1" {
		t.Skip("online migration e2e: set STREAMSHIFT_E2E_MIGRATION=1")
	}
	roll := &migrationRoll{ends: map[string]time.Time{}}
	rep := harness.RunScenario(t, harness.Scenario{
		Name:          "online migration classic → streams → classic through streamshift on 3.9",
		Broker:        harness.Kafka39,
		AppBuild:      harness.App44,
		GroupProtocol: "classic",
		Guarantee:     "exactly_once_v2",
		Hold:          10 * time.Second,
		Route: func(ctx context.Context, r *harness.Run) (string, error) {
			addr, stop := startStreamshift(ctx, r.T, r.Dir, r.Broker.Bootstrap, "online", nativeTestSettings...)
			r.T.Cleanup(stop)
			return addr, nil
		},
		Steps: []harness.Step{
			roll.start("c1", "classic"),
			roll.start("c2", "classic"),
			roll.replace("c1", "s1", "streams"),
			roll.replace("c2", "s2", "streams"),
			roll.replace("s1", "c3", "classic"),
			roll.check(),
		},
	})
	for i, s := range rep.Steps {
		if s.DirtyClose != 0 {
			t.Errorf("step %d (%s): %d tasks closed dirty", i+1, s.Step, s.DirtyClose)
		}
	}
}
