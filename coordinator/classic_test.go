package coordinator

import (
	"testing"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// TestEnterClassicVerdicts: each verdict of EnterClassic, reached from the
// state that decides it, and whether the request is counted in flight for
// a takeover's drain (only one that passed the gate is).
func TestEnterClassicVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		group   string
		setup   func(t *testing.T, c *Coordinator) (cleanup func())
		want    ClassicVerdict
		counted bool
	}{
		{name: "unknown group goes upstream", group: "app", want: ClassicForward, counted: true},
		{name: "no group id goes upstream uncounted", group: "", want: ClassicForward},
		{name: "group with state is served", group: "app", want: ClassicServe, counted: true,
			setup: func(t *testing.T, c *Coordinator) func() {
				joined := make(chan struct{})
				c.Heartbeat(joinReq("app", "m1", "p1", sourceTopology("foo")), streams.ClientInfo{ClientID: "c1"}, HeartbeatOptions{}, func(HeartbeatResult) { close(joined) })
				waitClosed(t, joined, "the streams member's join")
				return nil
			}},
		{name: "group with queued work is served", group: "app", want: ClassicServe, counted: true,
			setup: func(t *testing.T, c *Coordinator) func() {
				running, release := make(chan struct{}), make(chan struct{})
				c.run("app", func(*groupQueue) { close(running); <-release }, nil)
				waitClosed(t, running, "the group's work")
				return func() { close(release) }
			}},
		{name: "held during a takeover", group: "app", want: ClassicHeld,
			setup: func(t *testing.T, c *Coordinator) func() {
				drained := make(chan struct{})
				c.HoldClassic("app", drainTimeout, func() { close(drained) })
				waitClosed(t, drained, "the drain of an idle group")
				return func() { c.ReleaseClassic("app") }
			}},
		{name: "closed coordinator goes upstream uncounted", group: "app", want: ClassicForward,
			setup: func(t *testing.T, c *Coordinator) func() { c.Close(); return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := gateOnClock(t)
			if tc.setup != nil {
				if cleanup := tc.setup(t, c); cleanup != nil {
					defer cleanup()
				}
			}
			e := c.EnterClassic(tc.group)
			if e.Verdict != tc.want {
				t.Fatalf("verdict %d, want %d", e.Verdict, tc.want)
			}
			want := 0
			if tc.counted {
				want = 1
			}
			if n := c.ClassicInFlight(tc.group); n != want {
				t.Fatalf("%d requests in flight after the verdict, want %d", n, want)
			}
			e.Answered()
			e.Answered() // only the first counts
			if n := c.ClassicInFlight(tc.group); n != 0 {
				t.Fatalf("%d requests in flight once answered, want 0", n)
			}
		})
	}
}

// TestEnterClassicWait: a held request gets its verdict only once the
// group's requests are released, counted in flight from then; one whose
// group was released before it waited enters the gate again and passes.
func TestEnterClassicWait(t *testing.T) {
	c, _ := gateOnClock(t)
	drained := make(chan struct{})
	c.HoldClassic("app", drainTimeout, func() { close(drained) })
	waitClosed(t, drained, "the drain of an idle group")
	resumed := make(chan ClassicEntry, 2)
	first := c.EnterClassic("app")
	second := c.EnterClassic("app")
	if first.Verdict != ClassicHeld || second.Verdict != ClassicHeld {
		t.Fatalf("verdicts %d, %d while held, want %d", first.Verdict, second.Verdict, ClassicHeld)
	}
	first.Wait(func(e ClassicEntry) { resumed <- e })
	settle(t, c, "app")
	select {
	case e := <-resumed:
		t.Fatalf("resumed with verdict %d while held", e.Verdict)
	default:
	}
	c.ReleaseClassic("app")
	e := nextEntry(t, resumed)
	if e.Verdict != ClassicForward {
		t.Fatalf("released with verdict %d, want %d (no group here)", e.Verdict, ClassicForward)
	}
	if n := c.ClassicInFlight("app"); n != 1 {
		t.Fatalf("%d requests in flight after the release, want 1", n)
	}
	e.Answered()
	waitReleased(t, c, "app")
	// Released before it waited: the queue lets it enter again.
	second.Wait(func(e ClassicEntry) { resumed <- e })
	if e := nextEntry(t, resumed); e.Verdict != ClassicForward {
		t.Fatalf("verdict %d after the release, want %d", e.Verdict, ClassicForward)
	} else {
		e.Answered()
	}
	if n := c.ClassicInFlight("app"); n != 0 {
		t.Fatalf("%d requests in flight once answered, want 0", n)
	}
}

func nextEntry(t *testing.T, ch <-chan ClassicEntry) ClassicEntry {
	t.Helper()
	select {
	case e := <-ch:
		return e
	case <-time.After(gateWait):
		t.Fatalf("no verdict within %v", gateWait)
		return ClassicEntry{}
	}
}
