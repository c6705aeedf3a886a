package status

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
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

// A hand-back took from the last streams member's leave that led to it
// until every member of the broker's new classic generation had its
// assignment (the coordinator's classic-group-synced event), not its state
// flip; until then the page says the tasks still move. Each hand-back is
// one sample of streamshift_migration_settle_seconds{kind="hand-back"}: a
// second one later settles again, a repeated event adds none.
func TestHandBackTookUntilClassicGroupSynced(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	ev := NewEvents(m)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ev.now = func() time.Time { return now }
	mig := func(kind string) { ev.MigrationEvent(migration.MigrationEvent{Kind: kind, Group: "app"}) }
	left := func(protocol string) {
		ev.GroupEvent(coordinator.GroupEvent{Kind: streams.EventMemberLeft, Group: "app", Member: "m", Fields: map[string]any{streams.FieldProtocol: protocol}})
	}
	synced := func() {
		ev.GroupEvent(coordinator.GroupEvent{Kind: coordinator.EventClassicGroupSynced, Group: "app", Fields: map[string]any{"generation": int32(7), "members": 2}})
	}
	srv := New(Options{Coordinator: newCoordinator(t, ev), Events: ev})
	srv.reads.share = 0 // each page load reads anew
	h := srv.Handler()
	handBack := func(after time.Duration) {
		t.Helper()
		mig(migration.EventTakeoverStarted)
		mig(migration.EventTakeoverDone)
		now = now.Add(time.Minute)
		left(streams.ProtocolStreams) // the last streams member: the hand-back begins
		now = now.Add(2 * time.Second)
		left(streams.ProtocolClassic) // a classic member's leave is not the start
		now = now.Add(time.Second)
		mig(migration.EventHandBackStarted)
		synced() // a generation synced during the barrier is not the hand-back's end
		now = now.Add(3 * time.Millisecond)
		mig(migration.EventHandBackDone)
		if p := ev.phases()["app"]; p.Took != "" || p.Flip != "3ms" {
			t.Fatalf("right after the flip: took %q, flip %q; want no took yet, flip 3ms", p.Took, p.Flip)
		}
		if _, page := get(t, h, "/ui"); !strings.Contains(page, "(state flip 3ms; tasks still moving)") {
			t.Errorf("/ui lacks the unsettled hand-back's flip:\n%s", page)
		}
		now = now.Add(after - 3*time.Second - 3*time.Millisecond)
		synced()
		now = now.Add(time.Second)
		synced() // another generation later is not the hand-back's
	}
	handBack(5 * time.Second)
	p := ev.phases()["app"]
	if p.Kind != "hand-back" || p.Took != "5s" || p.Flip != "3ms" {
		t.Fatalf("settled: %s took %q, flip %q; want hand-back 5s (from the last streams leave), 3ms", p.Kind, p.Took, p.Flip)
	}
	code, page := get(t, h, "/ui")
	if code != http.StatusOK || !strings.Contains(page, "(took 5s until every task ran again; state flip 3ms)") {
		t.Errorf("/ui: %d, lacks the hand-back's took and flip:\n%s", code, page)
	}
	handBack(8 * time.Second)
	if p := ev.phases()["app"]; p.Took != "8s" {
		t.Fatalf("second hand-back took %q, want 8s", p.Took)
	}
	_, metrics := get(t, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), "/metrics")
	for _, want := range []string{`streamshift_migration_settle_seconds_sum{kind="hand-back"} 13`, `streamshift_migration_settle_seconds_count{kind="hand-back"} 2`,
		`streamshift_migration_duration_seconds_count{kind="hand-back",outcome="done"} 2`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
