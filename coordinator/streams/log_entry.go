package streams

import "time"

// What an operation logs is a value too: a change collects log entries
// (Kafka's GroupMetadataManager log lines, in its words and at its levels)
// and the runtime writes them to its logger once the operation returns.
// An entry is built as a zerolog event is (Str, Int32, ..., then Msgf), so
// the lines read the same in both packages; its message is formatted only
// when written.

// LogLevel is an entry's level, Kafka's (and zerolog's) names.
type LogLevel int8

const (
	LevelDebug LogLevel = iota
	LevelInfo
	LevelWarn
	LevelError
)

// LogField is one field of an entry: a string, int, int32, int64, uint64,
// time.Duration, []string or error (key "error").
type LogField struct {
	Key   string
	Value any
}

// LogEntry is one line to log. A nil entry (a debug line nobody wants)
// takes every call and logs nothing.
type LogEntry struct {
	// Event names what the line reports, for the coordinator's event hook
	// (the Event* constants of logging.go); empty for other lines.
	Event  string
	Level  LogLevel
	Fields []LogField
	Format string
	Args   []any
}

func (e *LogEntry) add(k string, v any) *LogEntry {
	if e != nil {
		e.Fields = append(e.Fields, LogField{k, v})
	}
	return e
}

func (e *LogEntry) Str(k, v string) *LogEntry               { return e.add(k, v) }
func (e *LogEntry) Strs(k string, v []string) *LogEntry     { return e.add(k, v) }
func (e *LogEntry) Int(k string, v int) *LogEntry           { return e.add(k, v) }
func (e *LogEntry) Int32(k string, v int32) *LogEntry       { return e.add(k, v) }
func (e *LogEntry) Dur(k string, v time.Duration) *LogEntry { return e.add(k, v) }
func (e *LogEntry) Err(err error) *LogEntry                 { return e.add("error", err) }

// Ev names the entry's event.
func (e *LogEntry) Ev(kind string) *LogEntry {
	if e != nil {
		e.Event = kind
	}
	return e
}

// Msgf sets the message, formatted when the entry is written.
func (e *LogEntry) Msgf(format string, args ...any) {
	if e != nil {
		e.Format, e.Args = format, args
	}
}
