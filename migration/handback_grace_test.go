package migration

import (
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/streamshift/streamshift/coordinator"
)

// TestHandBackGraceOnClock: after a hand-back is done, streams joins of the
// group still wait handBackGrace on the coordinator's clock, then go on.
func TestHandBackGraceOnClock(t *testing.T) {
	clock := coordinator.NewManualClock(time.Unix(0, 0))
	c, err := coordinator.New(coordinator.Options{Clock: clock, Metadata: coordinator.NewStaticMetadata()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	hb := &handingBack{done: make(chan struct{})}
	u := &migrationUpstream{clock: c, log: zerolog.Nop(), handingBack: map[string]*handingBack{"legacy": hb}}
	waited := make(chan struct{})
	go func() {
		u.waitHandBack("legacy", nil)
		close(waited)
	}()
	u.HandBackDone("legacy")
	clock.Advance(handBackGrace - time.Millisecond)
	select {
	case <-hb.done: // closed inside Advance when the grace ends
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
