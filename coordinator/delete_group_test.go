package coordinator

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// §11.30: only an empty group can be deleted; deletion writes the tombstones
// and cancels the initial-delay timer.
func TestScenario30DeleteGroup(t *testing.T) {
	h := newHarness(t, func(c *streams.Config) { c.Defaults.InitialRebalanceDelay = 3 * time.Second })
	h.md.SetTopic("foo", 2)
	del := func(id string) error {
		var got error
		called := false
		h.c.DeleteGroup(id, func(err error) { got, called = err, true })
		if !called {
			t.Fatal("no answer")
		}
		h.checkReplay()
		return got
	}
	if err := del("g"); !errors.Is(err, kerr.GroupIDNotFound) {
		t.Fatalf("missing group: %v", err)
	}
	r := h.ok(joinReq("g", "m1", "p1", sourceTopology("foo")))
	if err := del("g"); !errors.Is(err, kerr.NonEmptyGroup) {
		t.Fatalf("non-empty group: %v", err)
	}
	h.ok(hbReq("g", "m1", r.MemberEpoch, nil))
	h.ok(hbReq("g", "m1", -1, nil))
	if err := del("g"); err != nil {
		t.Fatalf("empty group: %v", err)
	}
	if got, want := recordTypes(h.log.last()), []string{"-20:", "-17:", "-23:"}; !slices.Equal(got, want) {
		t.Fatalf("records %v, want %v", got, want)
	}
	if h.group("g") != nil || len(h.log.All()) != 0 || h.clock.Pending() != 0 {
		t.Fatalf("group left behind: %d records, %d timers", len(h.log.All()), h.clock.Pending())
	}
	// The id can be used again from scratch.
	r = h.ok(joinReq("g", "m2", "p2", sourceTopology("foo")))
	if r.MemberEpoch != 1 || h.group("g").GroupEpoch != 2 {
		t.Fatalf("new group: member epoch %d group epoch %d", r.MemberEpoch, h.group("g").GroupEpoch)
	}
}
