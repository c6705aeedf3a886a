package harness

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Event is one machine-readable line of a test app: `EVT {"t":<ms>,"ev":"<kind>",...}`
// (printed by e2e/app-src/.../Evt.java).
type Event struct {
	App  string    // instance name given to StartApp
	Time time.Time // when the app printed it (same machine clock as the harness)
	// start, state, tasks, processed, restore_start, restore_end, uncaught, closing, closed,
	// stopped (printed by the app); task_closed (read from Kafka Streams' log, see parseLogEvent).
	Kind string

	// Kind-specific fields; zero when absent.
	From, To   string   // state: KafkaStreams.State transition
	State      string   // tasks: the app state when the task set was read
	Active     []string // tasks: active task ids ("0_1") of all local stream threads
	Standby    []string // tasks: standby task ids
	Count      int64    // processed: input records seen so far; produced/consumed (ClientCheck); standby_loaded: changelog records standby tasks read so far
	Duplicates int64    // consumed (ClientCheck): records seen twice
	Store      string   // restore_*: store name
	Partition  string   // restore_*: changelog partition
	Offsets    [2]int64 // restore_start: changelog start and end offset
	Restored   int64    // restore_end: records restored
	Error      string   // uncaught: the exception
	Clean      bool     // closed: KafkaStreams.close returned true; task_closed: clean (false: dirty)
	Task       string   // task_closed: the task id

	Raw string // the JSON object as printed
}

type wireEvent struct {
	T         int64    `json:"t"`
	Ev        string   `json:"ev"`
	From      string   `json:"from"`
	To        string   `json:"to"`
	State     string   `json:"state"`
	Active    []string `json:"active"`
	Standby   []string `json:"standby"`
	Count     int64    `json:"count"`
	Dups      int64    `json:"duplicates"`
	Store     string   `json:"store"`
	Partition string   `json:"partition"`
	Start     int64    `json:"start_offset"`
	End       int64    `json:"end_offset"`
	Restored  int64    `json:"restored"`
	Error     string   `json:"error"`
	Clean     bool     `json:"clean"`
}

const eventPrefix = "EVT "

// ParseEvent parses one stdout line of a test app; ok is false for lines that are not events.
func ParseEvent(app, line string) (ev Event, ok bool, err error) {
	if !strings.HasPrefix(line, eventPrefix) {
		return Event{}, false, nil
	}
	raw := strings.TrimSpace(line[len(eventPrefix):])
	var w wireEvent
	if err := json.Unmarshal([]byte(raw), &w); err != nil {
		return Event{}, true, fmt.Errorf("app %s: bad event line %q: %w", app, line, err)
	}
	if w.Ev == "" || w.T == 0 {
		return Event{}, true, fmt.Errorf("app %s: event line without t/ev: %q", app, line)
	}
	return Event{
		App: app, Time: time.UnixMilli(w.T), Kind: w.Ev,
		From: w.From, To: w.To, State: w.State, Active: w.Active, Standby: w.Standby,
		Count: w.Count, Duplicates: w.Dups, Store: w.Store, Partition: w.Partition,
		Offsets: [2]int64{w.Start, w.End}, Restored: w.Restored, Error: w.Error, Clean: w.Clean,
		Raw: raw,
	}, true, nil
}

// Kafka Streams (3.9 and 4.4) logs "task [0_1] Closed clean" / "Closed dirty" at INFO when a
// StreamTask closes. A dirty close (tasks lost: fenced, ILLEGAL_GENERATION, crash of the
// thread) is what a good migration must avoid, and no public API reports it.
var taskClosedLog = regexp.MustCompile(`task \[(\d+_\d+)\] Closed (clean|dirty)`)

// parseLogEvent turns a recognised Kafka Streams log line (stderr) into an event stamped at.
func parseLogEvent(app, line string, at time.Time) (Event, bool) {
	m := taskClosedLog.FindStringSubmatch(line)
	if m == nil {
		return Event{}, false
	}
	return Event{App: app, Time: at, Kind: "task_closed", Task: m[1], Clean: m[2] == "clean", Raw: line}, true
}
