package capture

import (
	"strings"
	"testing"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/migration"
)

// A hand-back's flight recorder holds its settle (the coordinator's
// classic-group-synced event, as a takeover's holds the group-state event
// that settles it) and stays one capture.flight-window from the settle,
// not from the state flip: here the window is 1 min, the flip at +1s, the
// settle at +50s, and the recorder is still there at +90s.
func TestFlightRecorderKeepsHandBackUntilSettled(t *testing.T) {
	r, err := New(Options{FlightWindow: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	r.Event(Event{Kind: migration.EventHandBackStarted, Group: "g", At: t0})
	r.Event(Event{Kind: migration.EventHandBackDone, Group: "g", At: t0.Add(time.Second)})
	r.Event(Event{Kind: streams.EventClassicGroupSynced, Group: "g", At: t0.Add(50 * time.Second), Fields: map[string]any{"generation": 8, "members": 2}})
	x := heartbeatExchange("g", "app-StreamThread-1-consumer")
	x.Received, x.Answered = t0.Add(90*time.Second), t0.Add(90*time.Second)
	r.Exchange(x)
	if err := r.Close(); err != nil { // the writer has written all of it
		t.Fatal(err)
	}
	fr, ok := r.FlightRecorder("g")
	if !ok {
		t.Fatal("the hand-back's flight recorder went one window after its flip, before one passed since it settled")
	}
	if !strings.Contains(string(fr), `"event":"`+streams.EventClassicGroupSynced+`"`) {
		t.Fatalf("flight recorder lacks the settle:\n%s", fr)
	}
}
