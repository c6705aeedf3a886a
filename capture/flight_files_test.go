package capture

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/migration"
)

// flightFiles lists the flight-recorder files of dir, sorted by name.
func flightFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), flightFilePrefix) {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out
}

// A takeover failing every few seconds for minutes is one incident: one
// file. Its success ends the incident (the next failure writes a file), and
// so does a quiet flight window. Before, every failure more than a second
// after the last wrote a file (230 files in a few minutes).
func TestFlightRecorderOneFilePerIncident(t *testing.T) {
	dir := t.TempDir()
	r, err := New(Options{FlightDir: dir, FlightWindow: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	event := func(kind string) {
		r.Event(Event{Kind: kind, Group: "app", At: at})
	}
	event(migration.EventTakeoverStarted)
	for range 120 { // two minutes of a failure every second
		at = at.Add(time.Second)
		event(migration.EventTakeoverFailed)
	}
	at = at.Add(time.Second)
	event(migration.EventTakeoverDone)
	at = at.Add(time.Second)
	event(migration.EventTakeoverFailed) // a new incident
	at = at.Add(30 * time.Second)
	event(migration.EventTakeoverFailed) // the same
	at = at.Add(61 * time.Second)
	event(migration.EventTakeoverFailed) // after a quiet window: new
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if got := flightFiles(t, dir); len(got) != 3 {
		t.Fatalf("%d files, want 3 (one per incident): first %v", len(got), got[:min(len(got), 3)])
	}
}

// The files in the flight directory stay within capture.flight-max-files
// and capture.flight-max-total-bytes, an earlier run's counted: the oldest
// go first, and other files are left alone.
func TestFlightRecorderFilesCapped(t *testing.T) {
	for _, tc := range []struct {
		name       string
		maxFiles   int
		maxTotal   int64
		keptBefore int // files of the earlier run kept
	}{
		{"files", 5, 64 << 20, 4},
		{"bytes", 32, 10<<10 + 100, 9}, // 10 KiB of old files + the new one's few hundred bytes
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			old := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			var earlier []string
			for i := range 40 { // an earlier run's files, oldest first
				name := fmt.Sprintf("%sold-%02d%s", flightFilePrefix, i, flightFileSuffix)
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, make([]byte, 1<<10), 0o600); err != nil {
					t.Fatal(err)
				}
				mod := old.Add(time.Duration(i) * time.Minute)
				if err := os.Chtimes(p, mod, mod); err != nil {
					t.Fatal(err)
				}
				earlier = append(earlier, name)
			}
			if err := os.WriteFile(filepath.Join(dir, "notes.txt"), make([]byte, 1<<20), 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := New(Options{FlightDir: dir, FlightMaxFiles: tc.maxFiles, FlightMaxTotalBytes: tc.maxTotal})
			if err != nil {
				t.Fatal(err)
			}
			r.Event(Event{Kind: migration.EventTakeoverStarted, Group: "app"})
			r.Event(Event{Kind: migration.EventTakeoverFailed, Group: "app"})
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			got := flightFiles(t, dir)
			var kept, written []string
			for _, n := range got {
				if strings.Contains(n, "-old-") {
					kept = append(kept, n)
				} else if strings.Contains(n, "-app-") {
					written = append(written, n)
				}
			}
			if !slices.Equal(kept, earlier[40-tc.keptBefore:]) || len(written) != 1 || len(got) != tc.keptBefore+1 {
				t.Fatalf("%d files after the dump (%d of the earlier run: %v), want the newest %d of the earlier run and the new one", len(got), len(kept), kept[:min(len(kept), 3)], tc.keptBefore)
			}
			if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
				t.Fatalf("a file not of the flight recorder was touched: %v", err)
			}
		})
	}
}

// A designed fence (the end of every rolling step) writes no file and no
// warning; what an operator must act on writes one, with a warning.
// capture.flight-on-designed-fence asks for the designed ones too, at info.
func TestFlightRecorderSeverity(t *testing.T) {
	closed := map[string]any{streams.FieldConnection: streams.ConnClosed}
	open := map[string]any{streams.FieldConnection: streams.ConnOpen}
	expiry := streams.DisconnectExpiredReason + ": closed 15s ago, 3 heartbeat intervals"
	for _, tc := range []struct {
		name       string
		ev         Event
		onDesigned bool
		level      string // of the "flight recorder written" line; "" none and no file
	}{
		{"disconnect expiry", Event{Kind: streams.EventMemberFenced, Reason: expiry, Fields: closed}, false, ""},
		{"replaced by identity", Event{Kind: streams.EventMemberReplaced, Reason: "replaced by identity (process)"}, false, ""},
		{"session expiry, connection closed", Event{Kind: streams.EventMemberFenced, Reason: streams.SessionExpiredReason, Fields: closed}, false, ""},
		{"session expiry, connection open", Event{Kind: streams.EventMemberFenced, Reason: streams.SessionExpiredReason, Fields: open}, false, "warn"},
		{"session expiry, older capture", Event{Kind: streams.EventMemberFenced, Reason: streams.SessionExpiredReason}, false, "warn"},
		{"rebalance timeout", Event{Kind: streams.EventMemberFenced, Reason: "it failed to transition from epoch 4 within 300000ms", Fields: open}, false, "warn"},
		{"takeover failed", Event{Kind: migration.EventTakeoverFailed, Reason: "upstream unreachable"}, false, "warn"},
		{"hand-back failed", Event{Kind: migration.EventHandBackFailed}, false, "warn"},
		{"disconnect expiry, asked for", Event{Kind: streams.EventMemberFenced, Reason: expiry, Fields: closed}, true, "info"},
		{"replaced, asked for", Event{Kind: streams.EventMemberReplaced}, true, "info"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var logs bytes.Buffer
			r, err := New(Options{FlightDir: dir, FlightOnDesignedFence: tc.onDesigned, Log: zerolog.New(&logs)})
			if err != nil {
				t.Fatal(err)
			}
			r.Event(Event{Kind: migration.EventTakeoverStarted, Group: "app"})
			tc.ev.Group = "app"
			r.Event(tc.ev)
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			files := flightFiles(t, dir)
			var written []string
			for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
				var l map[string]any
				if json.Unmarshal([]byte(line), &l) == nil && strings.HasPrefix(fmt.Sprint(l["message"]), "flight recorder written") {
					written = append(written, fmt.Sprint(l["level"]))
				}
			}
			if tc.level == "" && (len(files) != 0 || len(written) != 0) {
				t.Fatalf("files %v, log lines at %v; want none for a designed fence", files, written)
			}
			if tc.level != "" && (len(files) != 1 || !slices.Equal(written, []string{tc.level})) {
				t.Fatalf("files %v, log lines at %v; want one file, logged at %s", files, written, tc.level)
			}
		})
	}
}
