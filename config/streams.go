package config

// Streams is the `streams:` section: settings of the streams groups the proxy
// coordinates. Keys are Kafka's flat config names relative to the section,
// e.g. a field tagged `koanf:"session.timeout.ms"` is set by
//
//	streams:
//	  session.timeout.ms: 45000
//
// or STREAMSHIFT_STREAMS_SESSION_TIMEOUT_MS. To add a setting: add the field
// here with its tag, its default in DefaultStreams and its check in validate;
// the key then becomes known to the file, environment and unknown-key checks
// automatically.
type Streams struct{}

// DefaultStreams returns the streams settings before any source is applied.
func DefaultStreams() Streams { return Streams{} }

func (s Streams) validate() []string { return nil }
