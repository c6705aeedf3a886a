package coordinator

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// Disconnect expiry (streams/disconnect_expiry.go, issue #28,
// docs/fast-roll.md §7 test 6), in virtual time: a dynamic member whose
// connection closed and that sent nothing since is fenced K heartbeat
// intervals after the close; one that came back on another connection, or
// a static member, never is.

// expiryHarness is a harness whose coordinator expires disconnected
// members after 3 heartbeat intervals.
func expiryHarness(t *testing.T) (*harness, *world) {
	t.Helper()
	h := newHarness(t, nil)
	h.c.disconnectK = 3
	h.md.SetTopic("foo", 6)
	return h, newWorld(t, h, "g")
}

// closeConn closes a client connection and waits until the group ran the
// runtime's report of it (ConnClosed), so that the close happened at the
// virtual time it was called at. The wait is for an event, not a duration;
// its deadline only turns a hang into a failure.
func closeConn(t *testing.T, h *harness, conn chan struct{}) {
	t.Helper()
	close(conn)
	waitNotWatching(t, h, conn)
}

// waitNotWatching waits until group g ran the runtime's report of conn's
// close.
func waitNotWatching(t *testing.T, h *harness, conn chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		watching := true
		h.c.run("g", func(s *groupQueue) { watching = s.group != nil && s.group.Watching(conn) }, nil)
		if !watching {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the close of the connection never reached the group")
		}
		time.Sleep(time.Millisecond)
	}
}

const streamsExpiry = 3 * streams.DefaultHeartbeatInterval // K = 3, the group's 5 s

func TestDisconnectExpiryFencesStreamsMember(t *testing.T) {
	h, w := expiryHarness(t)
	c1, c2 := make(chan struct{}), make(chan struct{})
	w.streamsJoinOn("s1", "p1", "", c1)
	w.streamsJoinOn("s2", "p2", "", c2)
	logs := captureLogs(h)
	closeConn(t, h, c1)
	h.clock.Advance(streamsExpiry - time.Millisecond)
	if h.group("g").Members["s1"] == nil {
		t.Fatal("s1 fenced before 3 heartbeat intervals after its close")
	}
	h.clock.Advance(time.Millisecond)
	g := h.group("g")
	if g.Members["s1"] != nil || g.Members["s2"] == nil {
		t.Fatalf("at 3 heartbeat intervals after the close: s1 in %v, s2 in %v; want s1 fenced only", g.Members["s1"] != nil, g.Members["s2"] != nil)
	}
	wantFields(t, logs.want(t, "info", streams.DisconnectExpiredReason), map[string]string{streams.FieldConnection: streams.ConnClosed})
	h.checkReplay()
}

// A fencing says what the member's connection was: a session that expired
// while its connection stayed open is a live client that stopped
// heartbeating (an operator acts on it), unlike a stopped instance's (the
// capture's flight recorder tells them apart by this field).
func TestFencingSaysConnection(t *testing.T) {
	h, w := expiryHarness(t)
	c1 := make(chan struct{})
	w.streamsJoinOn("s1", "p1", "", c1)
	logs := captureLogs(h)
	h.clock.Advance(h.c.cfg.Defaults.SessionTimeout)
	if h.group("g").Members["s1"] != nil {
		t.Fatal("s1 not fenced at its session timeout")
	}
	wantFields(t, logs.want(t, "info", streams.SessionExpiredReason), map[string]string{streams.FieldConnection: streams.ConnOpen})
}

// A member that came back on a new connection with a heartbeat before the
// expiry is not fenced, at the expiry or after.
func TestDisconnectExpiryNotAfterReconnect(t *testing.T) {
	h, w := expiryHarness(t)
	c1 := make(chan struct{})
	w.streamsJoinOn("s1", "p1", "", c1)
	closeConn(t, h, c1)
	h.clock.Advance(streamsExpiry / 2)
	s1 := w.streams["s1"]
	hb := hbReq(w.group, "s1", s1.epoch, &s1.owned)
	var code int16 = -1
	h.c.StreamsGroupHeartbeat(hb, streams.ClientInfo{ClientID: "s1", Closed: make(chan struct{})}, func(r *kmsg.StreamsGroupHeartbeatResponse) { code = r.ErrorCode })
	if code != 0 {
		t.Fatalf("heartbeat on the new connection: %d", code)
	}
	h.clock.Advance(streamsExpiry)
	if h.group("g").Members["s1"] == nil {
		t.Fatal("a member back on a new connection was fenced by the expiry of its old one")
	}
}

// A static member keeps its place across a bounce: never expired.
func TestDisconnectExpiryNotForStaticMember(t *testing.T) {
	h, w := expiryHarness(t)
	c1 := make(chan struct{})
	if s, resp := w.streamsJoinOn("s1", "p1", "i1", c1); s == nil {
		t.Fatalf("static join: %d", resp.ErrorCode)
	}
	closeConn(t, h, c1)
	h.clock.Advance(streamsExpiry + time.Second)
	if h.group("g").Members["s1"] == nil {
		t.Fatal("a static member was fenced by the disconnect expiry")
	}
}

// A classic member's interval is the largest gap seen between its
// heartbeats (here 3.2 s, above Kafka's 3 s default), so it is fenced 9.6 s
// after its close, before its 10 s session would end.
func TestDisconnectExpiryFencesClassicMember(t *testing.T) {
	h, w := expiryHarness(t)
	w.streamsJoin("s1", "ps", sourceTopology("foo"))
	c1 := w.newClassic("c1", "pA")
	c1.conn = make(chan struct{})
	w.settleAll()
	gap := 3200 * time.Millisecond
	if err := c1.heartbeat(); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(gap)
	if err := c1.heartbeat(); err != nil {
		t.Fatal(err)
	}
	c1.gone = true
	closeConn(t, h, c1.conn)
	h.clock.Advance(3*gap - time.Millisecond)
	if h.group("g").Members["c1"] == nil {
		t.Fatal("c1 fenced before 3 of its heartbeat gaps after its close")
	}
	h.clock.Advance(time.Millisecond)
	if h.group("g").Members["c1"] != nil {
		t.Fatal("c1 not fenced 3 heartbeat gaps after its close")
	}
	h.checkReplay()
	w.check()
}

// A classic member whose connection closed while the group was still
// upstream is carried by a takeover (its process came back as another,
// stateless, so nothing replaces it). Its expiry counts from the close the
// proxy recorded, not from the takeover: with a successor slow to start,
// counting from the takeover let the member's session (running on from its
// last heartbeat) end first, a fence by session (issue #41).
func TestDisconnectExpiryOfCarriedMemberCountsFromItsClose(t *testing.T) {
	const classicExpiry = 3 * 3 * time.Second // K = 3 of Kafka's 3 s default interval
	for _, tc := range []struct {
		name         string
		closedBefore time.Duration // the close, before the takeover
		fencedByThen time.Duration // after the takeover
	}{
		{"closed longer ago than the expiry: fenced at the takeover", 20 * time.Second, time.Millisecond},
		{"closed 3 s before: fenced 6 s after", 3 * time.Second, classicExpiry - 3*time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := make(chan struct{})
			w, c1, _, st := takeoverRoll(t, conn, make(chan struct{}))
			h := w.h
			h.c.disconnectK = 3
			st.Members[0].SessionTimeoutMs = 30000
			st.Members[0].LastHeartbeat = h.clock.Now() // its session ends 29 s after its close
			h.clock.Advance(time.Second)
			closedAt := h.clock.Now()
			st.Members[0].Client.ClosedAt = func() time.Time { return closedAt }
			c1.gone = true
			close(conn)
			h.clock.Advance(tc.closedBefore)
			if resp := w.takeOver(st, "a1", "pZ"); resp.ErrorCode != 0 {
				t.Fatalf("takeover: %d %v", resp.ErrorCode, deref(resp.ErrorMessage))
			}
			waitNotWatching(t, h, conn)
			if tc.fencedByThen > time.Millisecond {
				h.clock.Advance(tc.fencedByThen - time.Millisecond)
				if h.group("g").Members["c1"] == nil {
					t.Fatalf("c1 fenced before %v after its close", classicExpiry)
				}
			}
			h.clock.Advance(time.Millisecond)
			if h.group("g").Members["c1"] != nil {
				t.Fatalf("c1, whose connection closed %v before the takeover, not fenced %v after it", tc.closedBefore, tc.fencedByThen)
			}
		})
	}
}
