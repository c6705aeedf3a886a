package harness

import (
	"reflect"
	"testing"
	"time"
)

func TestActiveOverlaps(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	evs := []Event{
		{App: "a1", Kind: "tasks", Time: at(0), Active: []string{"0_0", "0_1"}},
		{App: "a1", Kind: "tasks", Time: at(1000), Active: []string{"0_0"}},
		{App: "a2", Kind: "tasks", Time: at(900), Active: []string{"0_1"}}, // 100 ms overlap on 0_1
		{App: "a3", Kind: "tasks", Time: at(500), Active: []string{"0_0"}}, // a3 killed at 700: 200 ms on 0_0
	}
	got := ActiveOverlaps(evs, map[string]time.Time{"a3": at(700)}, at(5000))
	if len(got) != 2 {
		t.Fatalf("overlaps %v", got)
	}
	if got[0].Task != "0_0" || got[0].Dur != 200*time.Millisecond || got[1].Task != "0_1" || got[1].Dur != 100*time.Millisecond {
		t.Fatalf("overlaps %v", got)
	}
	if o := ActiveOverlaps(evs[:2], nil, at(5000)); len(o) != 0 {
		t.Fatalf("one instance cannot overlap itself: %v", o)
	}
}

func TestParseIQ(t *testing.T) {
	ev, ok, err := ParseEvent("a1", `EVT {"t":1,"ev":"iq","hosts":["127.0.0.1:1|in-0,in-1|","127.0.0.1:2||in-0"]}`)
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	got, err := ParseIQ(ev)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]IQHost{"127.0.0.1:1": {Active: []string{"in-0", "in-1"}}, "127.0.0.1:2": {Standby: []string{"in-0"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v", got)
	}
	if _, err := ParseIQ(Event{Raw: `{"hosts":["x"]}`}); err == nil {
		t.Fatal("bad entry accepted")
	}
}

func TestTaskPartitions(t *testing.T) {
	got, err := TaskPartitions([]string{"1_2", "0_0"}, "in", "rep")
	if err != nil || !reflect.DeepEqual(got, []string{"in-0", "rep-2"}) {
		t.Fatal(got, err)
	}
	if _, err := TaskPartitions([]string{"2_0"}, "in", "rep"); err == nil {
		t.Fatal("unknown subtopology accepted")
	}
}

// A 3.x instance keeps reporting a task it revoked and closed until its
// thread turns RUNNING again; the overlap ends at its "Closed clean", not at
// its next report. A close after the other instance started still counts.
func TestActiveOverlapsEndAtTaskClose(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	closed := func(app string, ms int, line string) Event {
		ev, ok := parseLogEvent(app, line, at(ms))
		if !ok {
			t.Fatalf("not a close: %q", line)
		}
		return ev
	}
	evs := []Event{
		{App: "c3", Kind: "tasks", Time: at(0), Active: []string{"1_1", "1_2"}},
		closed("c3", 1000, "INFO stream-thread [c3-StreamThread-1] task [1_2] Closed clean (org.apache.kafka.streams.processor.internals.StreamTask)"),
		// A standby of 1_1 closing on c3 does not end c3's active 1_1.
		closed("c3", 1100, "INFO stream-thread [c3-StreamThread-1] standby-task [1_1] Closed clean (org.apache.kafka.streams.processor.internals.StandbyTask)"),
		{App: "c2", Kind: "tasks", Time: at(1200), Active: []string{"1_1", "1_2"}},
		{App: "c3", Kind: "tasks", Time: at(2230), Active: []string{"1_1"}}, // RUNNING again
		{App: "c3", Kind: "tasks", Time: at(3000), Active: nil},
	}
	of := func(task string) (d time.Duration) {
		for _, o := range ActiveOverlaps(evs, nil, at(5000)) {
			if o.Task == task {
				d += o.Dur
			}
		}
		return d
	}
	if d := of("1_2"); d != 0 {
		t.Fatalf("1_2 on two instances for %s; c3 closed it before c2 had it", d)
	}
	if d := of("1_1"); d != 1800*time.Millisecond {
		t.Fatalf("1_1 on two instances for %s, want 1.8 s (a standby's close ends no active task)", d)
	}
	// c3 closes 1_2 only after c2 started it: 300 ms on both.
	evs[1] = closed("c3", 1500, "INFO stream-thread [c3-StreamThread-1] task [1_2] Closed clean (StreamTask)")
	if d := of("1_2"); d != 300*time.Millisecond {
		t.Fatalf("1_2 on two instances for %s, want 300 ms", d)
	}
}
