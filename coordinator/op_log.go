package coordinator

import "time"

// What an operation logs is a value too: a change collects log entries
// (Kafka's GroupMetadataManager log lines, in its words and at its levels)
// and the runtime writes them to its logger once the operation returns.
// An entry is built as a zerolog event is (Str, Int32, ..., then Msgf), so
// the lines read the same in both packages; its message is formatted only
// when written.

// logLevel is an entry's level, Kafka's (and zerolog's) names.
type logLevel int8

const (
	levelDebug logLevel = iota
	levelInfo
	levelWarn
	levelError
)

// logField is one field of an entry: a string, int, int32, int64, uint64,
// time.Duration, []string or error (key "error").
type logField struct {
	key   string
	value any
}

// logEntry is one line to log. A nil entry (a debug line nobody wants)
// takes every call and logs nothing.
type logEntry struct {
	level  logLevel
	fields []logField
	format string
	args   []any
}

func (e *logEntry) add(k string, v any) *logEntry {
	if e != nil {
		e.fields = append(e.fields, logField{k, v})
	}
	return e
}

func (e *logEntry) Str(k, v string) *logEntry               { return e.add(k, v) }
func (e *logEntry) Strs(k string, v []string) *logEntry     { return e.add(k, v) }
func (e *logEntry) Int(k string, v int) *logEntry           { return e.add(k, v) }
func (e *logEntry) Int32(k string, v int32) *logEntry       { return e.add(k, v) }
func (e *logEntry) Dur(k string, v time.Duration) *logEntry { return e.add(k, v) }
func (e *logEntry) Err(err error) *logEntry                 { return e.add("error", err) }

// Msgf sets the message, formatted when the entry is written.
func (e *logEntry) Msgf(format string, args ...any) {
	if e != nil {
		e.format, e.args = format, args
	}
}
