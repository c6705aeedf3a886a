package coordinator

import (
	"testing"
	"time"
)

// Unseen expiry (streams/unseen_expiry.go, issue #41), in virtual time: a
// classic member a takeover carries whose requests this instance never saw
// (behind one address: its process stopped before an owner failover, so
// its close went to the dead owner) is fenced K heartbeat intervals after
// the takeover, not at its session's end; its successor of the same process
// id then gets its tasks. A carried member that sends a request in time, or
// any with the expiry off, stays.

const unseenExpiry = 3 * 3 * time.Second // K = 3 of Kafka's 3 s classic interval

// unseenTakeover takes group g over with a1 of c1's process; c1's
// connection and last heartbeat are unknown (the observer never saw it), its
// session Kafka's default 45 s; c2 is connected.
func unseenTakeover(t *testing.T, k int) (*world, *classicClient, *classicClient) {
	t.Helper()
	w, c1, c2, st := takeoverRoll(t, nil, make(chan struct{}))
	w.h.c.disconnectK = k
	st.Members[0].SessionTimeoutMs = 45000
	if resp := w.takeOver(st, "a1", c1.process.String()); resp.ErrorCode != 0 {
		t.Fatalf("takeover: %d %v", resp.ErrorCode, deref(resp.ErrorMessage))
	}
	if w.h.group("g").Members["c1"] == nil {
		t.Fatal("c1, its connection unknown, was replaced at the takeover")
	}
	return w, c1, c2
}

func TestUnseenCarriedMemberFencedForItsSuccessor(t *testing.T) {
	w, c1, _ := unseenTakeover(t, 3)
	logs := captureLogs(w.h)
	c1.gone = true
	w.h.advance(unseenExpiry - time.Millisecond)
	if w.h.group("g").Members["c1"] == nil {
		t.Fatalf("c1 fenced before %v", unseenExpiry)
	}
	w.h.advance(time.Millisecond)
	g := w.h.group("g")
	if g.Members["c1"] != nil {
		t.Fatalf("c1, unseen since the takeover, still in the group %v after it (its session is 45 s)", unseenExpiry)
	}
	if g.Members["c2"] == nil || g.Members["a1"] == nil {
		t.Fatal("the unseen expiry fenced a member it had seen")
	}
	logs.want(t, "info", "unseen expiry")
	w.settleAll()
	if n := len(w.streams["a1"].owned.Active); n == 0 {
		t.Fatal("the successor a1 got none of c1's tasks")
	}
	w.h.checkReplay()
}

// A carried member that heartbeats is seen: no expiry (the live member of
// an owner failover); nor is any with the disconnect expiry off.
func TestUnseenCarriedMemberKeptWhenSeenOrOff(t *testing.T) {
	t.Run("heartbeats", func(t *testing.T) {
		w, c1, _ := unseenTakeover(t, 3)
		w.h.advance(3 * time.Second)
		// Answered REBALANCE_IN_PROGRESS (the join moved the group
		// epoch): a live member then rejoins. The request is what counts.
		_ = c1.heartbeat()
		w.h.advance(unseenExpiry)
		if w.h.group("g").Members["c1"] == nil {
			t.Fatal("c1 fenced though it heartbeat after the takeover")
		}
	})
	t.Run("expiry off", func(t *testing.T) {
		w, _, _ := unseenTakeover(t, 0)
		w.h.advance(unseenExpiry + time.Second)
		if w.h.group("g").Members["c1"] == nil {
			t.Fatal("c1 fenced with the disconnect expiry off")
		}
	})
}
