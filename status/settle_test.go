package status

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/migration"
)

// A takeover took from its start until its group was Stable again (every
// task running), not its 1 ms state flip, which is shown beside it by that
// name; until the group settles the page says the tasks still move. The
// settle time is its own metric; streamshift_migration_duration_seconds
// stays the flip.
func TestTakeoverTookUntilSettled(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	ev := NewEvents(m)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ev.now = func() time.Time { return now }
	state := func(s string) {
		ev.GroupEvent(coordinator.GroupEvent{Kind: coordinator.EventGroupState, Group: "app", Fields: map[string]any{"state": s, coordinator.FieldTasksRunning: s == "Stable"}})
	}
	ev.MigrationEvent(migration.MigrationEvent{Kind: migration.EventTakeoverStarted, Group: "app"})
	now = now.Add(time.Millisecond)
	state("Reconciling")
	ev.MigrationEvent(migration.MigrationEvent{Kind: migration.EventTakeoverDone, Group: "app"})
	p := ev.phases()["app"]
	if p.Took != "" || p.Flip != "1ms" {
		t.Fatalf("right after the flip: took %q, flip %q; want no took yet, flip 1ms", p.Took, p.Flip)
	}
	h := New(Options{Coordinator: newCoordinator(t, ev), Events: ev}).Handler()
	now = now.Add(6 * time.Second)
	state("Stable")
	p = ev.phases()["app"]
	if p.Took != "6.001s" || p.Flip != "1ms" || !p.Settled.Equal(now) {
		t.Fatalf("settled: took %q, flip %q, settled %v; want 6.001s, 1ms, at the Stable event", p.Took, p.Flip, p.Settled)
	}
	now = now.Add(time.Second)
	state("Reconciling")
	state("Stable") // a later rebalance is not the takeover's
	if p := ev.phases()["app"]; p.Took != "6.001s" {
		t.Fatalf("a later rebalance changed the takeover's took to %q", p.Took)
	}
	code, page := get(t, h, "/ui")
	if code != http.StatusOK || !strings.Contains(page, "(took 6.001s until every task ran again; state flip 1ms)") {
		t.Errorf("/ui: %d, lacks the takeover's took and flip", code)
	}
	_, metrics := get(t, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), "/metrics")
	for _, want := range []string{`streamshift_migration_settle_seconds_sum{kind="takeover"} 6.001`, `streamshift_migration_duration_seconds_sum{kind="takeover",outcome="done"} 0.001`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
