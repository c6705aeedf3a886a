package capture

import "time"

// The capture format. Format 1 (no header line) has exchanges and events;
// format 2 adds a header line at the top of each file (rotated ones
// included) and the connection lines (connections.go) the timeline needs
// to tell a task whose owner is gone from one whose owner runs it. A
// reader of format 2 reads format 1: a capture without connection lines
// tells a gone owner by its silence only (timeline_stalls.go).

// FormatVersion is the format this streamshift writes.
const FormatVersion = 2

// Line types.
const (
	TypeExchange   = "exchange"
	TypeEvent      = "event"
	TypeConnection = "connection"
	TypeHeader     = "header"
)

// Connection line events.
const (
	ConnOpened = "opened"
	ConnClosed = "closed"
)

// headerLine is the first line of a capture file.
func headerLine(instance string, start time.Time) Line {
	now := time.Now()
	return Line{Type: TypeHeader, Format: FormatVersion, Wall: now, MonoNs: now.Sub(start).Nanoseconds(), Instance: instance,
		Message: "streamshift capture"}
}

// knownType says whether a reader takes a line of type t.
func knownType(t string) bool {
	switch t {
	case TypeExchange, TypeEvent, TypeConnection, TypeHeader:
		return true
	}
	return false
}
