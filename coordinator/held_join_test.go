package coordinator

import (
	"testing"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// A held JoinGroup is an output of its operation (streams.Hold) and is run
// again only when a change releases its key (streams.Change.Released): the
// executor keeps its answer opaquely and never asks it whether it is ready.

// joinCounted sends c's JoinGroup and returns every answer it gets, so a
// test can check it is answered exactly once.
func joinCounted(t *testing.T, c *classicClient) *[]streams.ClassicJoinResult {
	t.Helper()
	sub, info := c.subscription()
	var answers []streams.ClassicJoinResult
	c.w.h.c.ClassicJoinGroup(streams.ClassicJoinRequest{
		GroupID: c.w.group, MemberID: c.id, InstanceID: c.instance,
		Client:           streams.ClientInfo{ClientID: c.id, ClientHost: "/127.0.0.1"},
		SessionTimeoutMs: 10000, RebalanceTimeoutMs: 60000,
		Subscription: sub, Info: info, NewMember: !c.joined,
	}, func(r streams.ClassicJoinResult) { answers = append(answers, r) })
	if len(answers) != 0 {
		t.Fatalf("%s's join answered at once: %+v (want it held)", c.id, answers)
	}
	return &answers
}

// checkHeld fails unless the group holds exactly want requests.
func checkHeld(t *testing.T, h *harness, want int) {
	t.Helper()
	if n := len(h.queue("g").held); n != want {
		t.Fatalf("%d requests held on the executor, want %d", n, want)
	}
}

// A held join is released by the change that frees the last task it waits
// for, answered once, and nothing of it stays on the executor.
func TestHeldJoinReleasedOnce(t *testing.T) {
	w, c1 := stepBack(t)
	c2 := w.newClassic("c2", "ps2")
	answers := joinCounted(t, c2)
	checkHeld(t, w.h, 1)
	w.streamsHeartbeat("s1")
	w.streamsHeartbeat("s1")
	if len(*answers) != 0 {
		t.Fatalf("answered while c1 still holds a task of c2's target: %+v", *answers)
	}
	c1.step() // c1 revokes: the change of its rejoin releases c2's join
	if len(*answers) != 1 || (*answers)[0].Err != nil {
		t.Fatalf("answers once c1 revoked: %+v, want one without error", *answers)
	}
	checkHeld(t, w.h, 0)
	w.streamsHeartbeat("s1")
	c1.step()
	w.h.advance(time.Minute) // past the hold's bound, the members' sessions expire
	if len(*answers) != 1 {
		t.Fatalf("the held join was answered %d times, want once", len(*answers))
	}
}

// A held join nothing frees is released by its timer at its bound (half
// its 10 s session), not before, and answered once.
func TestHeldJoinReleasedAtItsBound(t *testing.T) {
	w, _ := stepBack(t)
	c2 := w.newClassic("c2", "ps2")
	answers := joinCounted(t, c2)
	if !w.h.queue("g").HasTimer(streams.ClassicJoinHoldTimerKey("c2")) {
		t.Fatal("the hold armed no timer for its bound")
	}
	w.h.advance(5*time.Second - time.Millisecond)
	if len(*answers) != 0 {
		t.Fatalf("answered before its bound: %+v", *answers)
	}
	w.h.advance(time.Millisecond)
	if len(*answers) != 1 || (*answers)[0].Err != nil {
		t.Fatalf("answers at the bound: %+v, want one without error", *answers)
	}
	checkHeld(t, w.h, 0)
	w.h.advance(time.Minute) // the members' sessions expire
	if len(*answers) != 1 {
		t.Fatalf("the held join was answered %d times, want once", len(*answers))
	}
}

// The executor does not poll held requests after each work: a work that
// runs no change leaves a held join held even when its member would no
// longer wait (here a hand-back's barrier, set behind the model's back);
// only a Release answers it.
func TestHeldJoinNotPolled(t *testing.T) {
	w, _ := stepBack(t)
	c2 := w.newClassic("c2", "ps2")
	answers := joinCounted(t, c2)
	w.h.c.run("g", func(s *groupQueue) { s.group.Mem.HandBack = &streams.HandBack{Held: map[string]bool{}} }, nil)
	w.h.c.run("g", func(*groupQueue) {}, nil)
	if len(*answers) != 0 {
		t.Fatalf("a work without a change answered the held join: %+v", *answers)
	}
	checkHeld(t, w.h, 1)
	w.h.c.run("g", func(s *groupQueue) { s.group.Mem.HandBack = nil }, nil)
	w.h.advance(5 * time.Second)
	if len(*answers) != 1 {
		t.Fatalf("the held join was answered %d times at its bound, want once", len(*answers))
	}
}
