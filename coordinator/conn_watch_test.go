package coordinator

import (
	"runtime"
	"testing"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// A group watches a client connection while a member's latest request came
// on it (streams/conn_watch.go). The close signal of a client of another
// instance may never close: its origin restarted or its link was lost
// (proxy/peer_conn_closed.go forgets it, open). Its watch must end once no
// member references it, or every forgotten signal holds a goroutine for
// the coordinator's life; and forgetting must not read as a close.

// waitGoroutines waits until at most want goroutines run. The wait is for
// the watches' goroutines to end, not a duration: its deadline only turns
// a leak into a failure.
func waitGoroutines(t *testing.T, want int, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for runtime.NumGoroutine() > want {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d goroutines, want at most %d", what, runtime.NumGoroutine(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestForgottenConnectionsEndTheirWatches(t *testing.T) {
	h, w := expiryHarness(t)
	baseline := runtime.NumGoroutine()
	logs := captureLogs(h)
	s1, _ := w.streamsJoinOn("s1", "p1", "", make(chan struct{}))
	if s1 == nil {
		t.Fatal("s1 did not join")
	}
	// s1's instance restarts again and again behind one address: each
	// time the member comes back on a new signal and its earlier one is
	// forgotten, never closed.
	const restarts = 200
	for range restarts {
		s1.conn = make(chan struct{})
		w.streamsHeartbeat("s1")
	}
	waitGoroutines(t, baseline+1, "after 200 forgotten connections, one watched") // s1's latest
	if !h.group("g").Watching(s1.conn) {
		t.Fatal("the connection s1 is on is not watched")
	}

	// Its latest connection is forgotten too: s1 is not fenced by a
	// disconnect expiry (its connection did not close) but at its session
	// expiry, and then nothing is watched.
	h.clock.Advance(streamsExpiry)
	if h.group("g").Members["s1"] == nil {
		t.Fatal("a member whose connection was forgotten, not closed, was fenced by the disconnect expiry")
	}
	h.clock.Advance(h.c.cfg.Defaults.SessionTimeout)
	if h.group("g").Members["s1"] != nil {
		t.Fatal("s1 not fenced at its session timeout")
	}
	if got := logs.find(t, "info", streams.DisconnectExpiredReason); len(got) != 0 {
		t.Fatalf("a disconnect expiry fenced a member whose connection never closed: %v", got)
	}
	wantFields(t, logs.want(t, "info", streams.SessionExpiredReason), map[string]string{streams.FieldConnection: streams.ConnOpen})
	waitGoroutines(t, baseline, "after the member left")
}

// A connection another member still came on stays watched when one member
// leaves it: its close still fences that member by the disconnect expiry.
func TestConnectionWatchKeptWhileReferenced(t *testing.T) {
	h, w := expiryHarness(t)
	shared := make(chan struct{})
	w.streamsJoinOn("s1", "p1", "", shared)
	w.streamsJoinOn("s2", "p2", "", shared)
	w.streams["s1"].conn = make(chan struct{})
	w.streamsHeartbeat("s1")
	if !h.group("g").Watching(shared) {
		t.Fatal("the connection s2 is on stopped being watched when s1 left it")
	}
	closeConn(t, h, shared)
	h.clock.Advance(streamsExpiry)
	g := h.group("g")
	if g.Members["s2"] != nil || g.Members["s1"] == nil {
		t.Fatalf("3 heartbeat intervals after the shared connection closed: s1 in %v, s2 in %v; want s2 fenced only", g.Members["s1"] != nil, g.Members["s2"] != nil)
	}
}
