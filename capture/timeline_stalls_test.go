package capture

import (
	"fmt"
	"html"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// stallCapture builds classic members' exchanges on their connections,
// each member heartbeating every second (its heartbeat interval: the
// silence that tells a gone member is 2 s).
type stallCapture struct {
	t     *testing.T
	t0    time.Time
	lines []Line
}

func newStallCapture(t *testing.T) *stallCapture {
	return &stallCapture{t: t, t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *stallCapture) at(ms int) time.Time { return c.t0.Add(time.Duration(ms) * time.Millisecond) }

func (c *stallCapture) add(ms int, conn uint64, member, api string, key int16, req, resp map[string]any) {
	req["groupId"] = "g"
	l := exchangeLine(c.t, c.t0, ms, member, "10.0.0.1:1", api, key, req, resp)
	l.ConnID = conn
	c.lines = append(c.lines, l)
}

func (c *stallCapture) join(ms int, conn uint64, member string, gen int) {
	c.add(ms, conn, member, "JoinGroup", 11, map[string]any{"memberId": member + "-id"}, map[string]any{"memberId": member + "-id", "generationId": gen})
}

func (c *stallCapture) sync(ms int, conn uint64, member string, gen int, tasks ...string) {
	c.add(ms, conn, member, "SyncGroup", 14, map[string]any{"memberId": member + "-id", "generationId": gen},
		map[string]any{"assignmentDecoded": map[string]any{"assignmentInfo": map[string]any{"activeTasks": tasks}}})
}

// beats: a Heartbeat every second in [from, to].
func (c *stallCapture) beats(from, to int, conn uint64, member string) {
	for ms := from; ms <= to; ms += 1000 {
		c.add(ms, conn, member, "Heartbeat", 12, map[string]any{"memberId": member + "-id"}, map[string]any{})
	}
}

func (c *stallCapture) closed(ms int, conn uint64, member string) {
	c.lines = append(c.lines, Line{Type: TypeConnection, Event: ConnClosed, Wall: c.at(ms), ConnID: conn, ClientID: member, Groups: []string{"g"},
		Reason: "client closed the connection"})
}

// states is a task's intervals as "from..to state owners why" (ms since
// the capture's first line).
func states(tl *Timeline, task string) []string {
	var out []string
	for _, th := range tl.Tasks {
		if th.Task != task {
			continue
		}
		for _, in := range th.states {
			out = append(out, strings.Join(strings.Fields(fmt.Sprintf("%d..%d %s %s %s", in.from.Sub(tl.Start).Milliseconds(), in.to.Sub(tl.Start).Milliseconds(),
				in.state, strings.Join(in.owners, ","), in.why)), " "))
		}
	}
	return out
}

func wantStates(t *testing.T, tl *Timeline, task string, want ...string) {
	t.Helper()
	if got := states(tl, task); !slices.Equal(got, want) {
		t.Errorf("%s: %q, want %q", task, got, want)
	}
}

// Two classic members a (0_0) and b (0_1) in generation 1 from +0.1s.
func twoMembers(t *testing.T) *stallCapture {
	c := newStallCapture(t)
	c.join(0, 1, "a", 1)
	c.join(0, 2, "b", 1)
	c.sync(100, 1, "a", 1, "0_0")
	c.sync(100, 2, "b", 1, "0_1")
	return c
}

// A member whose connection closed is gone from the close: its task is
// stalled until another member runs it, and the stall's why says so. Its
// last heartbeat before the close is a member between heartbeats, not
// the stop.
func TestStallConnectionClosed(t *testing.T) {
	c := twoMembers(t)
	c.beats(1000, 10000, 1, "a")
	c.closed(10200, 1, "a")
	c.beats(1000, 25000, 2, "b")
	c.join(20000, 2, "b", 2)
	c.sync(20500, 2, "b", 2, "0_0", "0_1")
	tl := BuildTimeline(c.lines, "g")
	wantStates(t, tl, "0_0", "100..10200 running a", "10200..20500 stalled a a connection closed", "20500..25000 running b")
	wantStates(t, tl, "0_1", "100..25000 running b")
	if n, total, longest := tl.StallTotals(); n != 1 || total != 10300*time.Millisecond || longest != total {
		t.Errorf("stalls %d, %v, longest %v; want 1 of 10.3s", n, total, longest)
	}
	if len(tl.Steps) != 1 || tl.Steps[0].WentLane.ClientID != "a" || tl.Steps[0].Went != c.at(10200) || tl.Steps[0].CameLane != nil ||
		len(tl.Steps[0].Tasks) != 1 || tl.Steps[0].Tasks[0] != (TaskNoOwner{"0_0", 10300 * time.Millisecond}) {
		t.Errorf("steps %+v, want a went at +10.2s, none came, 0_0 10.3s with no running owner", tl.Steps)
	}
	var page strings.Builder
	if err := tl.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<rect class="z stalled"`, `0_0: STALLED +10.2s..+20.5s (10.3s): ran nowhere, a connection closed`,
		`id="stalls">1 stalls (a task ran nowhere, its owner gone): 10.3s task-time, the longest 10.3s`, `id="legend"`, `stalled: ran nowhere, its owner gone`} {
		if !strings.Contains(html.UnescapeString(page.String()), want) {
			t.Errorf("page lacks %s", want)
		}
	}
	var text strings.Builder
	tl.WriteText(&text)
	for _, want := range []string{
		"!  STALLED +10.2s..+20.5s (10.3s): ran nowhere, a connection closed",
		"1 stalls (a task ran nowhere because its owner was gone): 10.3s task-time in all, the longest 10.3s",
		"went a at +10.2s (connection closed), none came by the capture's end; tasks with no running owner: 0_0 10.3s",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
}

// A connection that closes and a member that comes straight back on a new
// one (within its heartbeat interval) is a reconnect, not a stop.
func TestStallReconnectIsNone(t *testing.T) {
	c := twoMembers(t)
	c.beats(1000, 5000, 1, "a")
	c.closed(5100, 1, "a")
	c.beats(5600, 10000, 3, "a")
	c.beats(1000, 10000, 2, "b")
	tl := BuildTimeline(c.lines, "g")
	wantStates(t, tl, "0_0", "100..10000 running a")
	if len(tl.Stalls) != 0 || len(tl.Steps) != 0 {
		t.Errorf("stalls %+v steps %+v, want none", tl.Stalls, tl.Steps)
	}
}

// A successor that starts on its predecessor's process id (a Kafka Streams
// instance on its state directory) has its label, so its lane; it is a new
// member, not a reconnect, however soon it came: the predecessor's task
// is stalled from the close until the successor's first request.
func TestStallFastSuccessorIsNoReconnect(t *testing.T) {
	c := twoMembers(t)
	c.beats(1000, 5000, 1, "a")
	c.closed(5100, 1, "a")
	c.add(5600, 3, "a", "JoinGroup", 11, map[string]any{"memberId": ""}, map[string]any{"memberId": "a2-id", "generationId": 2})
	c.add(6000, 3, "a", "SyncGroup", 14, map[string]any{"memberId": "a2-id", "generationId": 2},
		map[string]any{"assignmentDecoded": map[string]any{"assignmentInfo": map[string]any{"activeTasks": []string{"0_0"}}}})
	for ms := 7000; ms <= 10000; ms += 1000 {
		c.add(ms, 3, "a", "Heartbeat", 12, map[string]any{"memberId": "a2-id"}, map[string]any{})
	}
	c.beats(1000, 10000, 2, "b")
	tl := BuildTimeline(c.lines, "g")
	if got := states(tl, "0_0"); len(got) < 2 || got[1] != "5100..5600 stalled a a connection closed" {
		t.Errorf("0_0: %q, want stalled from the close at +5.1s to the successor's first request at +5.6s", got)
	}
	if len(tl.Stalls) != 1 {
		t.Errorf("stalls %+v, want one", tl.Stalls)
	}
}

// A capture without connection lines (format 1) tells a gone member by
// its silence: nothing for longer than twice its heartbeat interval, from
// its last answered request.
func TestStallSilent(t *testing.T) {
	c := twoMembers(t)
	c.beats(1000, 10000, 1, "a")
	c.beats(1000, 25000, 2, "b")
	c.join(20000, 2, "b", 2)
	c.sync(20500, 2, "b", 2, "0_0", "0_1")
	tl := BuildTimeline(c.lines, "g")
	wantStates(t, tl, "0_0", "100..10000 running a", "10000..20500 stalled a a silent", "20500..25000 running b")
	if hb := tl.lane("a").HeartbeatInterval; hb != time.Second {
		t.Errorf("a's heartbeat interval %v, want the 1 s between its Heartbeats", hb)
	}
}

// A member fenced by its disconnect expiry after its connection closed
// ran its tasks until the close, not only until its last heartbeat: a
// stopped instance closes its tasks, then its connection (the e2e's
// timeline check found the stall 1.1 s before the app's "closing" line).
func TestStallFencedAfterCloseFromTheClose(t *testing.T) {
	c := twoMembers(t)
	c.beats(1000, 10000, 1, "a")
	c.closed(10900, 1, "a")
	c.beats(1000, 25000, 2, "b")
	c.lines = append(c.lines, Line{Type: "event", Wall: c.at(19000), Event: streams.EventMemberFenced, Group: "g", Member: "a-id",
		Message: "fenced from the group because its connection closed and it sent no request since (disconnect expiry)"})
	c.join(20000, 2, "b", 2)
	c.sync(20500, 2, "b", 2, "0_0", "0_1")
	tl := BuildTimeline(c.lines, "g")
	if got := states(tl, "0_0"); len(got) < 2 || got[0] != "100..10900 running a" || !strings.HasPrefix(got[1], "10900..") || !strings.Contains(got[1], "stalled") {
		t.Errorf("0_0: %q, want stalled from the close at +10.9s (not the last heartbeat at +10s) to b's sync at +20.5s", got)
	}
}

// A member that left: its task is stalled until another member gets it.
func TestStallLeft(t *testing.T) {
	c := twoMembers(t)
	c.beats(1000, 9000, 1, "a")
	c.add(10000, 1, "a", "LeaveGroup", 13, map[string]any{"members": []any{}}, map[string]any{})
	c.beats(1000, 15000, 2, "b")
	c.join(11000, 2, "b", 2)
	c.sync(12000, 2, "b", 2, "0_0", "0_1")
	tl := BuildTimeline(c.lines, "g")
	wantStates(t, tl, "0_0", "100..10000 running a", "10000..12000 stalled a out of the group", "12000..15000 running b")
}

// A live member's revoke: the task moves in a rebalance, not a stall.
func TestStallRevokeIsMoving(t *testing.T) {
	c := twoMembers(t)
	c.beats(1000, 15000, 1, "a")
	c.beats(1000, 15000, 2, "b")
	c.join(9500, 1, "a", 2)
	c.sync(10000, 1, "a", 2)
	c.join(9500, 2, "b", 2)
	c.sync(11000, 2, "b", 2, "0_0", "0_1")
	tl := BuildTimeline(c.lines, "g")
	wantStates(t, tl, "0_0", "100..10000 running a", "10000..11000 moving", "11000..15000 running b")
	if len(tl.Stalls) != 0 {
		t.Errorf("stalls %+v, want none", tl.Stalls)
	}
}

// Two members that may both run a task: twice; once one's connection
// closed it cannot, and the task runs once.
func TestStallTwiceUntilClosed(t *testing.T) {
	c := twoMembers(t)
	c.beats(1000, 8000, 1, "a")
	c.closed(8000, 1, "a")
	c.beats(1000, 12000, 2, "b")
	// b is handed 0_0 by a streams heartbeat (served by streamshift: no
	// classic generation ends a's ownership).
	// (its request says it runs them: synthetic, an ack at once).
	c.add(5000, 2, "b", "StreamsGroupHeartbeat", 88, map[string]any{"memberId": "b-id", "memberEpoch": 3,
		"activeTasks": []map[string]any{{"subtopologyId": "0", "partitions": []int{0, 1}}}},
		map[string]any{"memberId": "b-id", "memberEpoch": 3, "heartbeatIntervalMs": 1000,
			"activeTasks": []map[string]any{{"subtopologyId": "0", "partitions": []int{0, 1}}}})
	tl := BuildTimeline(c.lines, "g")
	wantStates(t, tl, "0_0", "100..5000 running a", "5000..8000 twice a,b", "8000..12000 running a,b")
}

// A streams member given a task runs it from when its heartbeat says it
// owns it (it created the task), not from the coordinator's answer: the
// time between is the task moving to it, or still the stall of its gone
// predecessor.
func TestStallUntilStreamsMemberStarted(t *testing.T) {
	c := twoMembers(t)
	c.beats(1000, 10000, 1, "a")
	c.closed(10200, 1, "a")
	c.beats(1000, 20000, 2, "b")
	hb := func(ms, epoch int, owned []int, given []int) {
		req := map[string]any{"memberId": "s-id", "memberEpoch": epoch}
		if owned != nil {
			req["activeTasks"] = []map[string]any{{"subtopologyId": "0", "partitions": owned}}
		}
		resp := map[string]any{"memberId": "s-id", "memberEpoch": 5, "heartbeatIntervalMs": 1000}
		if given != nil {
			resp["activeTasks"] = []map[string]any{{"subtopologyId": "0", "partitions": given}}
		}
		c.add(ms, 4, "s", "StreamsGroupHeartbeat", 88, req, resp)
	}
	hb(12000, 0, nil, []int{0})
	hb(13000, 5, nil, nil)
	hb(14000, 5, []int{0}, nil)
	for ms := 15000; ms <= 20000; ms += 1000 {
		hb(ms, 5, nil, nil)
	}
	tl := BuildTimeline(c.lines, "g")
	// a keeps 0_0 on the timeline (no fence in this capture), gone.
	wantStates(t, tl, "0_0", "100..10200 running a", "10200..12000 stalled a a connection closed", "12000..14000 stalled a,s a connection closed", "14000..20000 running a,s")
}
