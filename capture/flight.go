package capture

import (
	"time"
)

// flightRecorder is one group's ring of its last lines: at most maxBytes of
// them, none older than window. Memory per group is bounded by maxBytes
// plus the ring's slice headers (a few dozen bytes a line).
type flightRecorder struct {
	group    string
	maxBytes int
	window   time.Duration
	lines    []flightLine // ring: lines[head:] then lines[:head]... kept simple as a queue
	head     int
	bytes    int
	// pinned: started on request (admin API), not by a migration.
	pinned bool
	// incidentLast is the last failure of the group's current incident
	// (zero: none), incidentFailures how many it had: one file per
	// incident (flight_files.go).
	incidentLast     time.Time
	incidentFailures int
	// until, if set, is when the recorder of a finished migration goes.
	until time.Time
}

type flightLine struct {
	at   time.Time
	line []byte
}

func (fr *flightRecorder) add(at time.Time, line []byte) {
	if len(line) > fr.maxBytes {
		return // a line larger than the whole ring would evict everything
	}
	fr.lines = append(fr.lines, flightLine{at, line})
	fr.bytes += len(line)
	fr.trim(at)
}

// trim drops lines past the window or the byte bound, oldest first, and
// compacts the queue once half of it is dead.
func (fr *flightRecorder) trim(now time.Time) {
	for fr.head < len(fr.lines) && (fr.bytes > fr.maxBytes || now.Sub(fr.lines[fr.head].at) > fr.window) {
		fr.bytes -= len(fr.lines[fr.head].line)
		fr.lines[fr.head] = flightLine{}
		fr.head++
	}
	if fr.head > 64 && fr.head*2 > len(fr.lines) {
		n := copy(fr.lines, fr.lines[fr.head:])
		clear(fr.lines[n:])
		fr.lines = fr.lines[:n]
		fr.head = 0
	}
}

// snapshot returns the lines in order, as one JSON-lines blob.
func (fr *flightRecorder) snapshot(now time.Time) []byte {
	fr.trim(now)
	out := make([]byte, 0, fr.bytes)
	for _, l := range fr.lines[fr.head:] {
		out = append(out, l.line...)
	}
	return out
}

func (fr *flightRecorder) len() int { return len(fr.lines) - fr.head }

// memory is what the ring holds: its lines and its slice.
func (fr *flightRecorder) memory() int { return fr.bytes + cap(fr.lines)*flightLineSize }

const flightLineSize = 48 // time.Time (24) + slice header (24)
