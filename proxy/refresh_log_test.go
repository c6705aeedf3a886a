package proxy

import (
	"testing"
	"time"
)

// TestRefreshLogBacksOff: a refresh failing once a second for 150 s (the
// cluster down at start) is logged at its first failure and then at
// doubling intervals, every failure counted in a line; the success that
// ends the run is reported once with the run's failures, and a new run
// starts over with a line at once.
func TestRefreshLogBacksOff(t *testing.T) {
	var l refreshLog
	start := time.Unix(1_000_000, 0)
	var lines []time.Duration
	counted := 0
	for i := 0; i < 150; i++ {
		now := start.Add(time.Duration(i) * time.Second)
		if log, held := l.failed(now); log {
			lines = append(lines, now.Sub(start))
			counted += 1 + held
		}
	}
	want := []time.Duration{0, 2 * time.Second, 6 * time.Second, 14 * time.Second, 30 * time.Second, 62 * time.Second, 126 * time.Second}
	if len(lines) != len(want) {
		t.Fatalf("lines at %v, want at %v", lines, want)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Fatalf("lines at %v, want at %v", lines, want)
		}
	}
	if held := 150 - counted; held != 23 { // the failures after the last line, 127 s..149 s
		t.Fatalf("%d failures not yet counted in a line, want 23", held)
	}
	ok, failures, took := l.succeeded(start.Add(150 * time.Second))
	if !ok || failures != 150 || took != 150*time.Second {
		t.Fatalf("recovery: %v, %d failures for %v; want true, 150 for 150s", ok, failures, took)
	}
	if ok, _, _ := l.succeeded(start.Add(151 * time.Second)); ok {
		t.Fatal("a second success reported as a recovery")
	}
	if log, _ := l.failed(start.Add(152 * time.Second)); !log {
		t.Fatal("the first failure of a new run is not logged")
	}
}

// TestRefreshLogCapped: during a long outage the lines come at most
// refreshLogMax apart, not ever more rarely.
func TestRefreshLogCapped(t *testing.T) {
	var l refreshLog
	start := time.Unix(1_000_000, 0)
	var last time.Time
	for i := 0; i < 6*3600; i++ {
		now := start.Add(time.Duration(i) * time.Second)
		if log, _ := l.failed(now); log {
			if !last.IsZero() && now.Sub(last) > refreshLogMax {
				t.Fatalf("%v between two lines, more than %v", now.Sub(last), refreshLogMax)
			}
			last = now
		}
	}
	if since := start.Add(6 * time.Hour).Sub(last); since > refreshLogMax {
		t.Fatalf("no line for the last %v of the outage", since)
	}
}
