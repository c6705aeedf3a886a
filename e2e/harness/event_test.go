package harness

import (
	"reflect"
	"testing"
	"time"
)

func TestParseEvent(t *testing.T) {
	ev, ok, err := ParseEvent("a1", `EVT {"t":1700000000123,"ev":"tasks","state":"RUNNING","active":["0_0","1_2"],"standby":[],"threads":1}`)
	if !ok || err != nil {
		t.Fatalf("ok=%v err=%v", ok, err)
	}
	if ev.App != "a1" || ev.Kind != "tasks" || ev.State != "RUNNING" || !reflect.DeepEqual(ev.Active, []string{"0_0", "1_2"}) ||
		!ev.Time.Equal(time.UnixMilli(1700000000123)) {
		t.Fatalf("parsed %+v", ev)
	}
	ev, _, err = ParseEvent("a1", `EVT {"t":1,"ev":"restore_start","store":"counts","partition":"p-1","start_offset":5,"end_offset":9}`)
	if err != nil || ev.Offsets != [2]int64{5, 9} {
		t.Fatalf("restore_start: %+v %v", ev, err)
	}
	if _, ok, _ := ParseEvent("a1", "[2026] INFO something"); ok {
		t.Fatal("a log line is not an event")
	}
	if _, ok, err := ParseEvent("a1", `EVT {"t":1,"ev":`); !ok || err == nil {
		t.Fatal("a truncated event line must be an error")
	}
	if _, _, err := ParseEvent("a1", `EVT {"ev":"state"}`); err == nil {
		t.Fatal("an event without a time must be an error")
	}
}

func TestParseLogEvent(t *testing.T) {
	now := time.Unix(100, 0)
	ev, ok := parseLogEvent("a1", "[2026-11-29T19:20:44,281] INFO stream-thread [x-StreamThread-1] task [1_3] Closed dirty (StreamTask)", now)
	if !ok || ev.Kind != "task_closed" || ev.Task != "1_3" || ev.Clean || !ev.Time.Equal(now) {
		t.Fatalf("dirty close: %+v ok=%v", ev, ok)
	}
	ev, ok = parseLogEvent("a1", "[..] INFO stream-thread [x] task [0_0] Closed clean (StreamTask)", now)
	if !ok || !ev.Clean || ev.Task != "0_0" {
		t.Fatalf("clean close: %+v ok=%v", ev, ok)
	}
	if _, ok := parseLogEvent("a1", "[..] INFO stream-thread [x] task [0_0] Suspended from RUNNING (StreamTask)", now); ok {
		t.Fatal("not a close")
	}
}
