package coordinator

import (
	"slices"
	"testing"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
)

const testExpiration = 10 * time.Minute

// expiringHarness is a harness whose Empty groups expire after
// testExpiration, recording which expired.
func expiringHarness(t *testing.T) (*harness, *[]string) {
	h := newHarness(t, nil)
	h.md.SetTopic("foo", 6)
	var expired []string
	h.c.expireAfter = testExpiration
	h.c.onExpired = func(g string) { expired = append(expired, g) }
	return h, &expired
}

func leave(h *harness, group, member string) {
	h.t.Helper()
	h.ok(hbReq(group, member, streams.LeaveGroupMemberEpoch, nil))
}

// An Empty group is deleted one check interval after it became Empty: its
// tombstones (with its ownership's) go to the log, its state and timers go,
// and the hook that makes its anchor leave upstream is told.
func TestEmptyGroupExpires(t *testing.T) {
	h, expired := expiringHarness(t)
	first := h.ok(joinReq("g", "m1", "p1", sourceTopology("foo"))).MemberEpoch
	leave(h, "g", "m1")
	h.advance(testExpiration - time.Second)
	if h.group("g") == nil || len(*expired) != 0 {
		t.Fatal("expired before the interval")
	}
	h.advance(time.Second)
	if h.group("g") != nil || !slices.Equal(*expired, []string{"g"}) {
		t.Fatalf("not expired after the interval: expired %v", *expired)
	}
	var types []streams.RecordType
	for _, r := range h.log.last() {
		if !r.Tombstone() {
			t.Fatalf("expiry wrote a record that is not a tombstone: %v", r)
		}
		types = append(types, r.Type)
	}
	if !slices.Contains(types, streams.RecordGroupMetadata) || !slices.Contains(types, streams.RecordTopology) {
		t.Fatalf("expiry wrote %v", recordTypes(h.log.last()))
	}
	if n := h.clock.Pending(); n != 0 {
		t.Fatalf("%d timers left", n)
	}
	// A member joining later starts a fresh group.
	resp := h.ok(joinReq("g", "m2", "p2", sourceTopology("foo")))
	if resp.MemberEpoch != first {
		t.Fatalf("rejoined group at epoch %d, a fresh group's is %d", resp.MemberEpoch, first)
	}
}

// A member joining an Empty group stops its expiration; the next time the
// group is Empty the interval starts again.
func TestRejoinStopsExpiration(t *testing.T) {
	h, expired := expiringHarness(t)
	h.ok(joinReq("g", "m1", "p1", sourceTopology("foo")))
	leave(h, "g", "m1")
	h.advance(testExpiration - time.Minute)
	h.ok(joinReq("g", "m2", "p2", sourceTopology("foo")))
	h.advance(time.Hour) // m2's heartbeats are not needed: its session expires
	if len(*expired) != 1 {
		// m2's session timeout (45s) made the group Empty again; it
		// expired testExpiration later.
		t.Fatalf("expired %v", *expired)
	}
	h2, expired2 := expiringHarness(t)
	h2.ok(joinReq("g", "m1", "p1", sourceTopology("foo")))
	leave(h2, "g", "m1")
	h2.advance(testExpiration - time.Minute)
	r := h2.ok(joinReq("g", "m2", "p2", sourceTopology("foo")))
	for range 40 { // m2 stays 20 minutes
		h2.advance(30 * time.Second)
		r = h2.ok(hbReq("g", "m2", r.MemberEpoch, nil))
	}
	if len(*expired2) != 0 || h2.group("g") == nil {
		t.Fatal("a group with a member expired")
	}
	leave(h2, "g", "m2")
	h2.advance(testExpiration - time.Second)
	if len(*expired2) != 0 {
		t.Fatal("the interval did not start again when the group became Empty again")
	}
	h2.advance(time.Second)
	if len(*expired2) != 1 {
		t.Fatal("not expired")
	}
}

// Members gone by their session timeout leave an Empty group, which expires
// as well.
func TestGroupOfExpiredSessionsExpires(t *testing.T) {
	h, expired := expiringHarness(t)
	h.ok(joinReq("g", "m1", "p1", sourceTopology("foo")))
	h.ok(joinReq("g", "m2", "p2", sourceTopology("foo")))
	h.advance(time.Minute) // both sessions (45s) expire
	if g := h.group("g"); g == nil || len(g.Members) != 0 {
		t.Fatal("sessions did not expire")
	}
	h.advance(testExpiration)
	if len(*expired) != 1 || h.group("g") != nil {
		t.Fatalf("expired %v", *expired)
	}
}

// A static member that left with epoch -2 stays a member: the group is not
// Empty and does not expire before its session ends.
func TestGroupOfReleasedStaticMemberWaits(t *testing.T) {
	h, expired := expiringHarness(t)
	j := joinReq("g", "m1", "p1", sourceTopology("foo"))
	j.InstanceID = strp("i1")
	h.ok(j)
	l := hbReq("g", "m1", -2, nil)
	l.InstanceID = strp("i1")
	h.ok(l)
	h.advance(30 * time.Second)
	if h.group("g") == nil || len(h.group("g").Members) != 1 {
		t.Fatal("released static member gone before its session timeout")
	}
	// Its session ends 45s after its last heartbeat: the group expires
	// testExpiration after that.
	h.advance(testExpiration + 14*time.Second)
	if len(*expired) != 0 {
		t.Fatal("expired before the interval since its last member went")
	}
	h.advance(time.Second)
	if len(*expired) != 1 {
		t.Fatalf("expired %v", *expired)
	}
}

// A group with classic members (a migration) is never Empty: it never
// expires, whatever its streams members do.
func TestGroupWithClassicMembersNeverExpires(t *testing.T) {
	h, expired := expiringHarness(t)
	h.c.expireAfter = testExpiration
	w, c1 := mixedGroupOf(t, h)
	leave(h, "g", "s1")
	delete(w.streams, "s1")
	for range 30 { // 30 minutes of c1 heartbeating
		for range 12 {
			h.advance(5 * time.Second)
			if err := c1.heartbeat(); err != nil {
				c1.rebalance()
			}
		}
	}
	if len(*expired) != 0 || h.group("g") == nil || h.group("g").Members["c1"] == nil {
		t.Fatalf("a group with a classic member expired: %v", *expired)
	}
}
