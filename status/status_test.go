package status

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/migration"
)

// join sends a streams member's first heartbeat (with task offsets, so the
// page has a lag) and returns its answer.
func join(t *testing.T, c *coordinator.Coordinator, group, member string) *kmsg.StreamsGroupHeartbeatResponse {
	t.Helper()
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Version, req.Group, req.MemberID, req.RebalanceTimeoutMillis, req.EndpointInformationEpoch = 0, group, member, 60000, -1
	p := "process-" + member
	req.ProcessID = &p
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	sub := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	sub.SubtopologyID, sub.SourceTopics = "0", []string{"input"}
	sub.StateChangelogTopics = []kmsg.TopicInfo{{Topic: group + "-store-changelog"}}
	topo.Subtopologies = append(topo.Subtopologies, sub)
	req.Topology = &topo
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	req.ClientTags = []kmsg.StreamsGroupHeartbeatRequestClientTag{}
	req.TaskOffsets = []kmsg.TaskOffset{{SubtopologyID: "0", Partition: 0, Offset: 10}}
	req.TaskEndOffsets = []kmsg.TaskOffset{{SubtopologyID: "0", Partition: 0, Offset: 25}}
	resp := heartbeat(t, c, req)
	// The changelog topic is created after the join: heartbeat until the
	// group gave the member its tasks.
	for i := 0; i < 100 && !hasTasks(t, c, group); i++ {
		time.Sleep(10 * time.Millisecond)
		req.MemberEpoch, req.Topology = resp.MemberEpoch, nil
		resp = heartbeat(t, c, req)
	}
	return resp
}

func hasTasks(t *testing.T, c *coordinator.Coordinator, group string) bool {
	d, err := describeGroups(context.Background(), c, []string{group})
	if err != nil {
		t.Fatal(err)
	}
	return len(d) == 1 && len(d[0].Members) == 1 && len(d[0].Members[0].Assignment.ActiveTasks) > 0
}

func heartbeat(t *testing.T, c *coordinator.Coordinator, req *kmsg.StreamsGroupHeartbeatRequest) *kmsg.StreamsGroupHeartbeatResponse {
	t.Helper()
	member := req.MemberID
	ch := make(chan *kmsg.StreamsGroupHeartbeatResponse, 1)
	c.Heartbeat(req, streams.ClientInfo{ClientID: "client-" + member, ClientHost: "/127.0.0.1"}, coordinator.HeartbeatOptions{}, func(r coordinator.HeartbeatResult) {
		if md, ok := metadataOf.Load(c); ok && len(r.CreatableTopics) > 0 {
			// What the route does (without its authorization).
			names := coordinator.TopicNames(r.CreatableTopics)
			creator{md.(*coordinator.StaticMetadata)}.CreateTopics(r.CreatableTopics, func(failed map[string]error) { c.TopicsCreated(req.Group, names, failed) })
		}
		ch <- r.Response
	})
	select {
	case r := <-ch:
		if r.ErrorCode != 0 {
			t.Fatalf("heartbeat %s: error %d", member, r.ErrorCode)
		}
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("join: no answer")
		return nil
	}
}

// metadataOf is the static metadata of each coordinator newCoordinator
// built, where creator creates the topics its heartbeats return.
var metadataOf sync.Map

// creator creates the internal topics in the static metadata at once.
type creator struct{ md *coordinator.StaticMetadata }

func (c creator) CreateTopics(topics []streams.CreatableTopic, done func(failed map[string]error)) {
	for _, t := range topics {
		c.md.SetTopic(t.Name, t.Partitions)
	}
	done(nil)
}

// newCoordinator is a real coordinator telling ev its events, over static
// metadata of one two-partition topic "input", assigning at once.
func newCoordinator(t *testing.T, ev *Events) *coordinator.Coordinator {
	t.Helper()
	md := coordinator.NewStaticMetadata()
	md.SetTopic("input", 2)
	cfg := streams.DefaultConfig()
	cfg.Defaults.InitialRebalanceDelay, cfg.Defaults.AssignmentInterval = 0, 0
	c, err := coordinator.New(coordinator.Options{Config: cfg, Metadata: md, Events: ev, CreateTopics: true})
	if err != nil {
		t.Fatal(err)
	}
	metadataOf.Store(c, md)
	t.Cleanup(func() { metadataOf.Delete(c) })
	t.Cleanup(c.Close)
	return c
}

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

// TestStatusPage: a streams member joins a real coordinator; the page, the
// JSON and the metrics show the group (state, epochs), the member (protocol,
// epoch, process, client id, host, tasks, lag), the migration's phase from
// its events, and the rebalance the join caused by its cause. A group only
// a migration knows (handed back) is listed as not served; an unknown one
// is a 404.
func TestStatusPage(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	ev := NewEvents(m)
	c := newCoordinator(t, ev)
	m.Bind(c, ev)
	srv := New(Options{Coordinator: c, Events: ev, FlightRecorders: func() []string { return []string{"app"} }})
	h := srv.Handler()

	resp := join(t, c, "app", "m1")
	ev.MigrationEvent(migration.MigrationEvent{Kind: migration.EventTakeoverStarted, Group: "app"})
	ev.MigrationEvent(migration.MigrationEvent{Kind: migration.EventTakeoverDone, Group: "app"})
	ev.MigrationEvent(migration.MigrationEvent{Kind: migration.EventHandBackStarted, Group: "old"})
	ev.MigrationEvent(migration.MigrationEvent{Kind: migration.EventHandBackFailed, Group: "old", Err: errors.New("anchor <leave> failed")})

	code, body := get(t, h, "/api/groups/app")
	if code != http.StatusOK {
		t.Fatalf("/api/groups/app: %d %s", code, body)
	}
	var g Group
	if err := json.Unmarshal([]byte(body), &g); err != nil {
		t.Fatal(err)
	}
	if !g.Served || g.State != "Stable" && g.State != "Reconciling" || g.GroupEpoch < 1 || g.Migration == nil || g.Migration.Kind != "takeover" || g.Migration.State != "done" ||
		g.FlightRecorder != "/capture/groups/app/flight-recorder" || len(g.Members) != 1 {
		t.Fatalf("group %+v", g)
	}
	mm := g.Members[0]
	if mm.MemberID != "m1" || mm.Protocol != "streams" || mm.MemberEpoch != resp.MemberEpoch || mm.ProcessID != "process-m1" || mm.ClientID != "client-m1" ||
		mm.ClientHost != "/127.0.0.1" || strings.Join(mm.Active, " ") != "0_0 0_1" || mm.Lag == nil || *mm.Lag != 15 || mm.LagReportedAt == nil {
		t.Fatalf("member %+v (lag %v)", mm, mm.Lag)
	}

	code, body = get(t, h, "/api/groups")
	var all struct{ Groups []Group }
	if err := json.Unmarshal([]byte(body), &all); code != http.StatusOK || err != nil || len(all.Groups) != 2 || all.Groups[1].ID != "old" || all.Groups[1].Served ||
		all.Groups[1].Migration.State != "failed" {
		t.Fatalf("/api/groups: %d %v %s", code, err, body)
	}
	if code, _ := get(t, h, "/api/groups/nope"); code != http.StatusNotFound {
		t.Fatalf("/api/groups/nope: %d, want 404", code)
	}

	code, page := get(t, h, "/ui")
	for _, want := range []string{`data-group="app" data-served="true"`, `data-member="m1" data-protocol="streams"`, `data-phase="takeover" data-phase-state="done"`,
		`data-group="old" data-served="false"`, "anchor &lt;leave&gt; failed", `href="/capture/groups/app/flight-recorder"`, `href="/api/groups/app"`, `data-task="0_0"`, `data-task="0_1"`, "client-m1", "process-m1", `data-lag="15"`, `data-source="reported"`, "a report, not a measurement"} {
		if code != http.StatusOK || !strings.Contains(page, want) {
			t.Errorf("/ui lacks %s", want)
		}
	}
	if strings.Contains(page, "src=") || strings.Contains(page, `href="http`) {
		t.Error("the page must not fetch anything from elsewhere")
	}
	if strings.Contains(page, `id="cluster"`) || g.Owner != nil {
		t.Error("without the durable log there is no cluster to show")
	}

	_, metrics := get(t, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), "/metrics")
	for _, want := range []string{`streamshift_group_members{protocol="streams"} 1`, `streamshift_group_members{protocol="classic"} 0`,
		`streamshift_group_epoch{group="app"} ` + itoa(g.GroupEpoch), `streamshift_migrations_total{kind="takeover",outcome="done"} 1`,
		`streamshift_migrations_total{kind="hand-back",outcome="failed"} 1`, `streamshift_migrations_running{kind="takeover"} 0`,
		`streamshift_migration_duration_seconds_count{kind="takeover",outcome="done"} 1`, `streamshift_group_rebalances_total{cause="member joined"}`,
		`streamshift_group_target_assignment_seconds_count `, `streamshift_streams_heartbeat_seconds_count `,
		`streamshift_group_log_append_seconds_count{result="ok"} `, `streamshift_internal_topics_created_total{result="created"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if !strings.Contains(metrics, `streamshift_groups{state="`+strings.ToLower(g.State)) && !strings.Contains(metrics, `streamshift_groups{state="`+g.State) {
		t.Errorf("/metrics lacks streamshift_groups for state %s:\n%s", g.State, metrics)
	}
}

// TestBoundedLabel: the rebalance-timeout fencing's numbers do not make a
// series each.
func TestBoundedLabel(t *testing.T) {
	for in, want := range map[string]string{
		"it failed to transition from epoch 12 within 300000ms": "it failed to transition from epoch N within Nms",
		"the member session expired":                            "the member session expired",
	} {
		if got := boundedLabel(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

func itoa(n int32) string { b, _ := json.Marshal(n); return string(b) }

// TestPhasesForgotten: a finished migration of a group no longer served
// leaves the page an hour later (the phases stay bounded); a running one,
// or one of a served group, stays.
func TestPhasesForgotten(t *testing.T) {
	now := time.Unix(0, 0)
	ev := NewEvents(nil)
	ev.now = func() time.Time { return now }
	ev.MigrationEvent(migration.MigrationEvent{Kind: migration.EventHandBackStarted, Group: "gone"})
	ev.MigrationEvent(migration.MigrationEvent{Kind: migration.EventHandBackDone, Group: "gone"})
	ev.MigrationEvent(migration.MigrationEvent{Kind: migration.EventTakeoverDone, Group: "served"})
	ev.MigrationEvent(migration.MigrationEvent{Kind: migration.EventTakeoverStarted, Group: "running"})
	now = now.Add(phaseKeep)
	ev.forget(map[string]bool{"served": true})
	if len(ev.phases()) != 3 {
		t.Fatalf("phases %v forgotten before an hour passed", ev.phases())
	}
	now = now.Add(time.Second)
	ev.forget(map[string]bool{"served": true})
	if p := ev.phases(); len(p) != 2 || p["gone"].Kind != "" {
		t.Fatalf("phases %v, want served and running only", p)
	}
}
