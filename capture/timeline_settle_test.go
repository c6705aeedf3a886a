package capture

import (
	"encoding/json"
	"fmt"
	"html"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/migration"
)

// migrationCapture is a takeover and a hand-back as the wire shows them:
// two classic instances c1 (0_0 0_1) and c2 (0_2 0_3); a streams instance
// s1 asks at +10s, refused while the broker's group is not stable, and the
// takeover flips in 1 ms at +12s; c1 and c2 rejoin and revoke 0_1 and 0_3
// at +14s, s1 gets them at +15s and acknowledges at +16s: the tasks ran
// again 6 s after the first request. s1 leaves at +20s, the hand-back
// flips from +20.5s to +21.002s, c1 and c2 rejoin the broker's group and
// the last SyncGroup answers at +24s. The classic members heartbeat every
// 3 s while they are in a group (not silent: timeline_stalls.go).
func migrationCapture(t *testing.T) []Line {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	join := func(ms int, c string, gen int) Line {
		return exchangeLine(t, t0, ms, c, "", "JoinGroup", 11, map[string]any{"groupId": "g", "memberId": c + "-id"}, map[string]any{"memberId": c + "-id", "generationId": gen})
	}
	sync := func(ms int, c string, gen int, tasks ...string) Line {
		return exchangeLine(t, t0, ms, c, "", "SyncGroup", 14, map[string]any{"groupId": "g", "memberId": c + "-id", "generationId": gen},
			map[string]any{"assignmentDecoded": map[string]any{"assignmentInfo": map[string]any{"activeTasks": tasks}}})
	}
	rebalancing := func(ms int, c string) Line {
		l := exchangeLine(t, t0, ms, c, "", "Heartbeat", 12, map[string]any{"groupId": "g", "memberId": c + "-id"}, map[string]any{})
		l.ErrorCodes, l.Errors = []int16{27}, []string{"REBALANCE_IN_PROGRESS"}
		return l
	}
	hb := func(ms, sent, got int, tasks []int) Line {
		resp := map[string]any{"memberId": "s1-id", "memberEpoch": got, "activeTasks": nil}
		if tasks != nil {
			resp["activeTasks"] = []map[string]any{{"subtopologyId": "0", "partitions": tasks}}
		}
		return exchangeLine(t, t0, ms, "s1", "", "StreamsGroupHeartbeat", 88, map[string]any{"groupId": "g", "memberId": "s1-id", "memberEpoch": sent}, resp)
	}
	ack := func(ms, sent, got int, owned []int) Line { // s1 says it runs owned
		l := hb(ms, sent, got, nil)
		var req map[string]any
		_ = json.Unmarshal(l.Request, &req)
		req["activeTasks"] = []map[string]any{{"subtopologyId": "0", "partitions": owned}}
		l.Request, _ = json.Marshal(req)
		return l
	}
	event := func(ms int, kind string, fields map[string]any) Line {
		return Line{Type: "event", Wall: at(ms), Event: kind, Group: "g", Fields: fields}
	}
	beat := func(ms int, c string) Line {
		return exchangeLine(t, t0, ms, c, "", "Heartbeat", 12, map[string]any{"groupId": "g", "memberId": c + "-id"}, map[string]any{})
	}
	refused := hb(10000, 0, 0, nil)
	refused.Response, refused.ErrorCodes, refused.Errors = nil, []int16{14}, []string{"COORDINATOR_LOAD_IN_PROGRESS"}
	return []Line{
		join(0, "c1", 1), join(0, "c2", 1), sync(100, "c1", 1, "0_0", "0_1"), sync(100, "c2", 1, "0_2", "0_3"),
		beat(3000, "c1"), beat(3000, "c2"), beat(6000, "c1"), beat(6000, "c2"), beat(9000, "c1"), beat(9000, "c2"),
		refused,
		beat(11000, "c1"), beat(11000, "c2"),
		event(12000, migration.EventTakeoverStarted, nil),
		event(12001, migration.EventTakeoverDone, map[string]any{"groupEpoch": 5.0}),
		hb(12001, 0, 5, []int{}),
		event(12002, streams.EventGroupEpochBumped, map[string]any{"epoch": 6.0}),
		rebalancing(13000, "c1"), rebalancing(13000, "c2"),
		join(14000, "c1", 6), sync(14000, "c1", 6, "0_0"), join(14000, "c2", 6), sync(14000, "c2", 6, "0_2"),
		hb(15000, 5, 6, []int{1, 3}),
		ack(16000, 6, 6, []int{1, 3}),
		beat(17000, "c1"), beat(17000, "c2"),
		hb(20000, -1, -1, nil),
		beat(20000, "c1"), beat(20000, "c2"),
		event(20500, migration.EventHandBackStarted, nil),
		event(21000, migration.EventHandBackAnchorLeft, nil),
		event(21002, migration.EventHandBackDone, nil),
		join(22000, "c1", 8), join(22000, "c2", 8),
		sync(23000, "c1", 8, "0_0", "0_1"),
		sync(24000, "c2", 8, "0_2", "0_3"),
		hb(25000, -1, -1, nil), // the capture ends a second later
	}
}

// A takeover and a hand-back take from the first request that started
// them until every task runs again, the state flip shown beside it by
// that name: not the flip alone (1 ms while tasks ran nowhere for
// seconds).
func TestTimelineStepsTakeUntilSettled(t *testing.T) {
	tl := BuildTimeline(migrationCapture(t), "g")
	if len(tl.Phases) != 2 {
		t.Fatalf("phases %+v, want a takeover and a hand-back", tl.Phases)
	}
	rel := func(at time.Time) time.Duration { return at.Sub(tl.Start) }
	for i, want := range []struct {
		kind                 string
		began, settled, flip time.Duration
	}{
		{"takeover", 10 * time.Second, 16 * time.Second, time.Millisecond},
		{"hand-back", 20 * time.Second, 24 * time.Second, 502 * time.Millisecond},
	} {
		p := tl.Phases[i]
		if p.Kind != want.kind || rel(p.Began) != want.began || rel(p.Settled) != want.settled || p.Flip() != want.flip {
			t.Errorf("%s: began +%v settled +%v flip %v; want began +%v settled +%v flip %v", p.Kind, rel(p.Began), rel(p.Settled), p.Flip(), want.began, want.settled, want.flip)
		}
	}
	var text, page strings.Builder
	tl.WriteText(&text)
	if err := tl.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"takeover  +10s .. +16s  took 6s until every task ran again (state flip 1ms at +12s)  done",
		"hand-back +20s .. +24s  took 4s until every task ran again (state flip 502ms at +20.5s)  done",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
		took := want[strings.Index(want, "took") : strings.LastIndex(want, ")")+1]
		if !strings.Contains(html.UnescapeString(page.String()), took) {
			t.Errorf("page lacks %q", took)
		}
	}
}

// A step after which the group never settled says so, with the time
// since its first request.
func TestTimelineStepNotSettled(t *testing.T) {
	lines := migrationCapture(t)
	var cut []Line
	for _, l := range lines {
		if l.Wall.Sub(lines[0].Wall) < 15*time.Second { // s1 never gets its tasks
			cut = append(cut, l)
		}
	}
	tl := BuildTimeline(cut, "g")
	var text strings.Builder
	tl.WriteText(&text)
	if !tl.Phases[0].Settled.IsZero() || !strings.Contains(text.String(), "takeover  +10s .. +14s  not settled by the capture's end (4s; state flip 1ms at +12s)  done") {
		t.Errorf("settled at %v:\n%s", tl.Phases[0].Settled, text.String())
	}
}

// The JSON form says what the text says: members by label, each task's
// intervals with owners and state, and each step's took and state flip.
func TestTimelineJSON(t *testing.T) {
	tl := BuildTimeline(migrationCapture(t), "g")
	var buf strings.Builder
	if err := tl.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var got TimelineJSON
	if err := json.Unmarshal([]byte(buf.String()), &got); err != nil {
		t.Fatal(err)
	}
	if got.Version != TimelineJSONVersion || got.Group != "g" || len(got.Members) != 3 || got.Members[0].Label != "c1" {
		t.Fatalf("header and members: %+v", got)
	}
	if len(got.Steps) != 2 || got.Steps[0].TookMs == nil || *got.Steps[0].TookMs != 6000 || got.Steps[0].FlipMs != 1 || got.Steps[0].BeganMs != 10000 ||
		got.Steps[1].TookMs == nil || *got.Steps[1].TookMs != 4000 || got.Steps[1].FlipMs != 502 {
		t.Fatalf("steps %s", buf.String())
	}
	var t01 []string
	for _, th := range got.Tasks {
		if th.Task == "0_1" {
			for _, in := range th.Intervals {
				t01 = append(t01, fmt.Sprintf("%d..%d %s %s", in.FromMs, in.ToMs, in.State, strings.Join(in.Owners, ",")))
			}
		}
	}
	// s1 left at +20s and nobody ran 0_1 until c1 got it back at +23s:
	// stalled (the hand-back's designed path, but the task ran nowhere).
	want := []string{"100..14000 running c1", "14000..15000 moving ", "15000..16000 moving s1", "16000..20000 running s1", "20000..23000 stalled ", "23000..25000 running c1"}
	if !slices.Equal(t01, want) {
		t.Fatalf("0_1 intervals %q, want %q", t01, want)
	}
	if got.Summary != (SummaryJSON{Tasks: 4, RebalanceGaps: 4, Stalls: 2, StallMs: 7000, LongestStallM: 4000}) {
		t.Fatalf("summary %+v", got.Summary)
	}
}

// A capture with the coordinator's group-state events settles a takeover
// where they say every task runs, the instant the status page and
// streamshift_migration_settle_seconds use (here +15.5s, before s1's
// next heartbeat at +16s); one without them (an older capture) by its
// exchanges, as above.
func TestTimelineTakeoverSettlesAtTasksRunning(t *testing.T) {
	lines := migrationCapture(t)
	t0 := lines[0].Wall
	state := func(ms int, running bool) Line {
		return Line{Type: "event", Wall: t0.Add(time.Duration(ms) * time.Millisecond), Event: streams.EventGroupState, Group: "g",
			Fields: map[string]any{"state": "Reconciling", streams.FieldTasksRunning: running}}
	}
	lines = append(lines, state(12000, false), state(15500, true))
	tl := BuildTimeline(lines, "g")
	if got := tl.Phases[0].Settled.Sub(t0); got != 15500*time.Millisecond {
		t.Fatalf("takeover settled at +%v, want +15.5s (the group-state event)", got)
	}
	if got := tl.Phases[1].Settled.Sub(t0); got != 24*time.Second {
		t.Fatalf("hand-back settled at +%v, want +24s (its group settles in the broker: by the exchanges)", got)
	}
}

// A capture with the coordinator's classic-group-synced events settles a
// hand-back at the one after its flip (every member of the broker's new
// generation has its assignment, the last SyncGroup answer as the proxy
// saw it), the instant the status page and
// streamshift_migration_settle_seconds{kind="hand-back"} use; one before
// the flip is not the hand-back's.
func TestTimelineHandBackSettlesAtClassicGroupSynced(t *testing.T) {
	lines := migrationCapture(t)
	t0 := lines[0].Wall
	synced := func(ms int) Line {
		return Line{Type: "event", Wall: t0.Add(time.Duration(ms) * time.Millisecond), Event: streams.EventClassicGroupSynced, Group: "g",
			Fields: map[string]any{"generation": 8.0, "members": 2.0}}
	}
	lines = append(lines, synced(20700), synced(24001))
	tl := BuildTimeline(lines, "g")
	if got := tl.Phases[1].Settled.Sub(t0); tl.Phases[1].Kind != "hand-back" || got != 24001*time.Millisecond {
		t.Fatalf("%s settled at +%v, want the hand-back at +24.001s (the classic-group-synced event)", tl.Phases[1].Kind, got)
	}
	if took, _ := tl.Phases[1].Took(tl.End); took != 4001*time.Millisecond {
		t.Fatalf("hand-back took %v, want 4.001s from s1's leave at +20s", took)
	}
}
