package coordinator

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/internal/testlog"
)

// logCapture collects the coordinator's log lines (zerolog writes one JSON
// object per Write).
type logCapture struct{ testlog.Buffer }

// captureLogs sends the harness coordinator's log lines, debug included, to
// the returned capture.
func captureLogs(h *harness) *logCapture {
	l := &logCapture{}
	h.c.logger = zerolog.New(l).Level(zerolog.DebugLevel)
	return l
}

type logLine map[string]any

func (l logLine) str(k string) string { s, _ := l[k].(string); return s }

func (l *logCapture) lines(t *testing.T) []logLine {
	t.Helper()
	var out []logLine
	for _, raw := range bytes.Split(bytes.TrimSpace([]byte(l.String())), []byte("\n")) {
		if len(raw) == 0 {
			continue
		}
		var line logLine
		if err := json.Unmarshal(raw, &line); err != nil {
			t.Fatalf("log line %q: %v", raw, err)
		}
		out = append(out, line)
	}
	return out
}

// find returns the lines at level whose message contains text.
func (l *logCapture) find(t *testing.T, level, text string) []logLine {
	t.Helper()
	var out []logLine
	for _, line := range l.lines(t) {
		if line.str("level") == level && strings.Contains(line.str("message"), text) {
			out = append(out, line)
		}
	}
	return out
}

// want returns the one line at level whose message contains text, and
// fails the test unless there is exactly one.
func (l *logCapture) want(t *testing.T, level, text string) logLine {
	t.Helper()
	found := l.find(t, level, text)
	if len(found) != 1 {
		var all []string
		for _, line := range l.lines(t) {
			all = append(all, line.str("level")+" "+line.str("message"))
		}
		t.Fatalf("%d %s lines with %q, want 1; the log:\n%s", len(found), level, text, strings.Join(all, "\n"))
	}
	return found[0]
}

func (l *logCapture) count(t *testing.T, level string) int {
	t.Helper()
	return len(l.find(t, level, ""))
}

// wantFields fails unless the line has these string fields.
func wantFields(t *testing.T, line logLine, fields map[string]string) {
	t.Helper()
	for k, v := range fields {
		if got := line.str(k); got != v {
			t.Errorf("field %s = %q, want %q in %v", k, got, v, line)
		}
	}
}

// Epoch bumps, departures and fencings are logged at info with the group
// and member ids, in Kafka's words; steady heartbeats log nothing at info.
func TestLogEpochBumpsAndFencings(t *testing.T) {
	h := newHarness(t, nil)
	logs := captureLogs(h)
	h.md.SetTopic("foo", 4)
	r := h.ok(joinReq("g", "m1", "p1", sourceTopology("foo")))
	// A new group starts at epoch 1; its first member bumps it.
	bump := logs.want(t, "info", "[GroupId g][MemberId m1] Bumped streams group epoch from 1 to 2")
	wantFields(t, bump, map[string]string{"group": "g", "member": "m1"})
	if !strings.Contains(bump.str("reason"), streams.BumpMemberJoined) || !strings.Contains(bump.str("reason"), streams.BumpTopology) {
		t.Errorf("first join's reasons: %q", bump.str("reason"))
	}
	if bump["previous_epoch"] != 1.0 || bump["epoch"] != 2.0 {
		t.Errorf("epochs in %v", bump)
	}

	// Settle, then steady heartbeats: nothing at info.
	got, _ := assigned(r)
	r = h.ok(hbReq("g", "m1", r.MemberEpoch, &got))
	infos := logs.count(t, "info")
	for range 5 {
		r = h.ok(hbReq("g", "m1", r.MemberEpoch, nil))
	}
	if n := logs.count(t, "info"); n != infos {
		t.Fatalf("steady heartbeats logged %d info lines", n-infos)
	}

	r2 := h.ok(joinReq("g", "m2", "p2", sourceTopology("foo")))
	wantFields(t, logs.want(t, "info", "Bumped streams group epoch from 2 to 3"), map[string]string{"member": "m2", "reason": streams.BumpMemberJoined})

	h.ok(hbReq("g", "m2", -1, nil))
	wantFields(t, logs.want(t, "info", "[GroupId g][MemberId m2] Member m2 left the streams group."), map[string]string{"group": "g", "member": "m2"})
	wantFields(t, logs.want(t, "info", "Bumped streams group epoch from 3 to 4"), map[string]string{"member": "m2", "reason": streams.BumpMemberLeft})

	h.advance(h.c.cfg.Defaults.SessionTimeout)
	fenced := logs.want(t, "info", "[GroupId g] Member m1 fenced from the group because the member session expired.")
	wantFields(t, fenced, map[string]string{"group": "g", "member": "m1", "reason": streams.SessionExpiredReason,
		streams.FieldConnection: streams.ConnUnknown})
	wantFields(t, logs.want(t, "info", "Bumped streams group epoch from 4 to 5"), map[string]string{"member": "m1", "reason": streams.BumpMemberFenced})
	_ = r2
	if n := logs.count(t, "error"); n != 0 {
		t.Fatalf("%d error lines", n)
	}
}

// A member that does not revoke within its rebalance timeout is fenced,
// and the log says so with Kafka's reason.
func TestLogRebalanceTimeoutFencing(t *testing.T) {
	h := newHarness(t, nil)
	logs := captureLogs(h)
	h.md.SetTopic("foo", 4)
	j := joinReq("g", "m1", "p1", sourceTopology("foo"))
	j.RebalanceTimeoutMillis = 10000
	r := h.ok(j)
	got, _ := assigned(r)
	r = h.ok(hbReq("g", "m1", r.MemberEpoch, &got))
	h.ok(joinReq("g", "m2", "p2", sourceTopology("foo")))
	// m1 is told to revoke half of its tasks, and never does.
	r = h.ok(hbReq("g", "m1", r.MemberEpoch, &got))
	if st := h.group("g").Members["m1"].CurrentAssignment().State; st != streams.MemberUnrevokedTasks {
		t.Fatalf("m1 is %v", st)
	}
	h.advance(10 * time.Second)
	line := logs.want(t, "info", "[GroupId g] Member m1 fenced from the group because it failed to transition from epoch")
	wantFields(t, line, map[string]string{"member": "m1"})
	if !strings.HasSuffix(line.str("message"), "within 10000ms.") {
		t.Errorf("message %q", line.str("message"))
	}
	if len(logs.find(t, "debug", "Member's new assignment state")) == 0 {
		t.Error("reconciliations are not logged at debug")
	}
}

// A timer whose change the log refuses is logged as an error with the group
// and the timer key (it was dropped silently), and the group stays as its
// log has it.
func TestLogTimerCommitFailure(t *testing.T) {
	h := newHarness(t, nil)
	logs := captureLogs(h)
	h.md.SetTopic("foo", 2)
	h.ok(joinReq("g", "m1", "p1", sourceTopology("foo")))
	h.log.fail = errors.New("disk on fire")
	h.advance(h.c.cfg.Defaults.SessionTimeout)
	h.log.fail = nil
	line := logs.want(t, "error", "The write event for the timer session-timeout-g-m1 failed")
	wantFields(t, line, map[string]string{"group": "g", "member": "m1", "timer": "session-timeout-g-m1"})
	if !strings.Contains(line.str("error"), "disk on fire") {
		t.Errorf("error field %q", line.str("error"))
	}
	// The last member's fencing: three tombstones, the epoch and the
	// assignment metadata of the now empty group.
	wantFields(t, logs.want(t, "error", "[GroupId g] Failed to write 5 records to the group log"), map[string]string{"group": "g"})
	if !strings.Contains(line.str("message"), "append 5 records of group g") {
		t.Errorf("the timer's error lost the records count: %q", line.str("message"))
	}
	if h.group("g").Members["m1"] == nil {
		t.Fatal("the fencing stayed although its append failed")
	}
}

// Loading logs each group with its members, and the whole load.
func TestLogLoad(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 2)
	for _, gm := range [][2]string{{"g", "m1"}, {"g", "m2"}, {"g2", "m1"}} {
		h.ok(joinReq(gm[0], gm[1], "process-"+gm[1], sourceTopology("foo")))
	}
	records := h.log.All()

	h2 := newHarness(t, nil)
	logs := captureLogs(h2)
	if err := h2.c.Load(records); err != nil {
		t.Fatal(err)
	}
	wantFields(t, logs.want(t, "info", "Loaded streams group g with 2 members."), map[string]string{"group": "g"})
	logs.want(t, "info", "Loaded streams group g2 with 1 members.")
	logs.want(t, "debug", "Loaded member m2 in streams group g.")
	done := logs.want(t, "info", "Finished loading of the group log")
	if done["records"] != float64(len(records)) || done["groups"] != 2.0 {
		t.Fatalf("load summary %v", done)
	}
}

// A classic member that joins and never syncs is fenced by its sync
// timeout, heartbeating or not.
func TestLogClassicSyncTimeout(t *testing.T) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	w := newWorld(t, h, "g")
	w.streamsJoin("s1", "ps", sourceTopology("foo"))
	logs := captureLogs(h)
	c1 := w.newClassic("c1", "pc")
	if j := c1.join(); j.Err != nil {
		t.Fatal(j.Err)
	}
	c1.gone = true // it holds nothing: it never synced
	for range 8 {
		_ = c1.heartbeat() // keeps its session; REBALANCE_IN_PROGRESS once s1 released its tasks
		w.streamsHeartbeat("s1")
		h.advance(8 * time.Second)
	}
	if h.group("g").Members["c1"] != nil {
		t.Fatal("a member that never syncs is kept past its rebalance timeout")
	}
	wantFields(t, logs.want(t, "info", "[GroupId g] Member c1 fenced from the group because "+streams.ClassicSyncTimeoutReason+"."), map[string]string{"member": "c1"})
}

// TestWriteLogAsZerolog: a log entry an operation returns is written as the
// zerolog event with the same calls would be, field type by field type.
func TestWriteLogAsZerolog(t *testing.T) {
	var got, want bytes.Buffer
	c := &Coordinator{logger: zerolog.New(&got)}
	e := &streams.LogEntry{Level: streams.LevelInfo}
	e.Str("group", "g").Strs("configs", []string{"a", "b"}).Int("n", 2).Int32("epoch", 3).
		Dur("took", 1500*time.Millisecond).Err(errors.New("boom")).Msgf("[GroupId %s] %d", "g", 4)
	c.writeLog(e)
	wl := zerolog.New(&want)
	wl.Info().Str("group", "g").Strs("configs", []string{"a", "b"}).Int("n", 2).Int32("epoch", 3).
		Dur("took", 1500*time.Millisecond).Err(errors.New("boom")).Msgf("[GroupId %s] %d", "g", 4)
	if got.String() != want.String() {
		t.Fatalf("written\n%s\nwant\n%s", got.String(), want.String())
	}
	c.logger = zerolog.New(&got).Level(zerolog.InfoLevel)
	got.Reset()
	c.writeLog(&streams.LogEntry{Level: streams.LevelDebug, Format: "hidden"})
	if got.Len() != 0 {
		t.Fatalf("a debug entry under an info logger wrote %q", got.String())
	}
}
