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
