package migration

import (
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// TestHandBackGraceOnClock: from the anchor's leave for a hand-back until
// handBackGrace after the hand-back is done, streams joins of the group
// wait, on the coordinator's clock (the grace is the group's migration
// state: coordinator/migration_handback.go).
func TestHandBackGraceOnClock(t *testing.T) {
	clock := coordinator.NewManualClock(time.Unix(0, 0))
	c, err := coordinator.New(coordinator.Options{Clock: clock, Metadata: coordinator.NewStaticMetadata()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	u := &migrationUpstream{anchors: noAnchors{}, timeout: time.Second, handOff: c, log: zerolog.Nop()}
	left := make(chan error, 1)
	u.LeaveAnchor("legacy", func(err error) { left <- err })
	if err := <-left; err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() {
		c.WaitHandBack("legacy", nil)
		close(waited)
	}()
	u.HandBackDone("legacy")
	// Time moves once the grace's timer is armed.
	for clock.Pending() == 0 {
		time.Sleep(time.Millisecond)
	}
	clock.Advance(handBackGrace - time.Millisecond)
	queued := make(chan struct{})
	c.HandBack("legacy", func(streams.HandBackState) { close(queued) })
	waitClosed(t, queued, "the group's queue")
	select {
	case <-waited:
		t.Fatal("a streams join went on before the grace passed")
	default:
	}
	clock.Advance(time.Millisecond)
	waitClosed(t, waited, "the end of the grace")
}

// graceWait bounds the wait of the grace test: a grace that never ends
// fails the test instead of hanging it.
const graceWait = 10 * time.Second

// waitClosed waits for ch to be closed, failing the test after graceWait.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(graceWait):
		t.Fatalf("%s never happened (waited %v)", what, graceWait)
	}
}
