package capture

import (
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestRecorderConnectionLines: a capture file starts with its format's
// header; the connection that carried a member's Heartbeat gets an
// "opened" line (at the connection's open) before its first exchange and
// a "closed" line with the proxy's reason; a connection with no member
// request gets none.
func TestRecorderConnectionLines(t *testing.T) {
	name := filepath.Join(t.TempDir(), "c.jsonl")
	r, err := New(Options{Instance: "p1", File: name, Groups: []string{"g"}})
	if err != nil {
		t.Fatal(err)
	}
	opened := time.Now().Add(-time.Second)
	x := heartbeatExchange("g", "app-1")
	x.Opened = opened
	r.Exchange(x)
	r.Exchange(x)
	r.ConnClosed(ConnClose{ConnID: 1, At: time.Now(), Reason: "client closed the connection"})
	r.ConnClosed(ConnClose{ConnID: 2, At: time.Now(), Reason: "no member request on it"})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	lines := readAll(t, name)
	var kinds []string
	for _, l := range lines {
		kinds = append(kinds, l.Type+"/"+l.Event)
	}
	want := []string{"header/", "connection/opened", "exchange/", "exchange/", "connection/closed"}
	if len(kinds) != len(want) {
		t.Fatalf("lines %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("lines %v, want %v", kinds, want)
		}
	}
	if h := lines[0]; h.Format != FormatVersion || h.Instance != "p1" {
		t.Errorf("header %+v, want format %d of instance p1", h, FormatVersion)
	}
	if o := lines[1]; !o.Wall.Equal(opened) || o.ConnID != 1 || o.ClientID != "app-1" || o.ClientAddress != "127.0.0.1:5000" || len(o.Groups) != 1 {
		t.Errorf("opened line %+v, want conn 1 of app-1 at %v in group g", o, opened)
	}
	if c := lines[4]; c.Reason != "client closed the connection" || c.ClientID != "app-1" || c.ConnID != 1 {
		t.Errorf("closed line %+v", c)
	}
}

// The writer's memory of member connections stays bounded: a connection
// that closed while nothing was captured (its close not queued) is
// forgotten once the capture was off, and the count is capped.
func TestRecorderForgetsConnectionsClosedWhileOff(t *testing.T) {
	r, err := New(Options{Instance: "p1", FlightDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	wrote := func(conn uint64) {
		t.Helper()
		x := heartbeatExchange("g", "app-1")
		x.ConnID = conn
		r.Exchange(x)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			fr, _ := r.FlightRecorder("g")
			if bytes.Contains(fr, []byte(fmt.Sprintf(`"connId":%d,`, conn))) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("conn %d never in the flight recorder: %s", conn, fr)
			}
		}
	}
	if err := r.StartGroup("g"); err != nil {
		t.Fatal(err)
	}
	wrote(1)
	r.StopGroup("g")
	r.ConnClosed(ConnClose{ConnID: 1, At: time.Now(), Reason: "client closed the connection"}) // not queued: off
	if err := r.StartGroup("g"); err != nil {
		t.Fatal(err)
	}
	wrote(2)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.conns[1]; ok || len(r.conns) != 1 {
		t.Errorf("the writer remembers connections %v, want only 2 (1 closed while the capture was off)", slices.Collect(maps.Keys(r.conns)))
	}
}
