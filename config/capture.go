package config

import (
	"fmt"
	"time"

	"github.com/streamshift/streamshift/capture"
	"github.com/streamshift/streamshift/coordinator/streams"
)

// Capture is the `capture:` section: traffic capture for debugging
// migrations (package capture). Off by default; a capture file starts at
// boot when File is set, and groups can be started at runtime through the
// admin API (/capture).
//
//	capture:
//	  file: /var/log/streamshift/capture.jsonl
//	  groups: "orders-app"          # comma-separated; empty: every group
//	  client-ids: ""                # comma-separated; empty: every client
//	  api-keys: ""                  # names or numbers; empty: the group APIs with groups, else all
//	  max-bytes: 67108864           # rotate the file past this
//	  max-files: 5                  # files kept, the live one included
type Capture struct {
	File      string `koanf:"file"`
	Groups    string `koanf:"groups"`
	ClientIDs string `koanf:"client-ids"`
	APIKeys   string `koanf:"api-keys"`
	MaxBytes  int64  `koanf:"max-bytes"`
	MaxFiles  int    `koanf:"max-files"`
	// Flight recorders: per group in a migration or started at runtime,
	// the last FlightWindow of its traffic and events, at most
	// FlightMaxBytes each, for at most FlightMaxGroups groups; written to
	// FlightDir (default: the capture file's directory, else the temporary
	// directory) when a takeover or hand-back fails or a member is fenced by a fault
	// (FlightOnDesignedFence).
	FlightWindow    time.Duration `koanf:"flight-window"`
	FlightMaxBytes  int           `koanf:"flight-max-bytes"`
	FlightMaxGroups int           `koanf:"flight-max-groups"`
	FlightDir       string        `koanf:"flight-dir"`
	// FlightMaxFiles and FlightMaxTotalBytes cap the flight-recorder
	// files in FlightDir (an earlier run's included): the oldest are
	// removed before a new one is written. A group failing repeatedly
	// writes one file per incident (capture/flight_files.go).
	FlightMaxFiles      int   `koanf:"flight-max-files"`
	FlightMaxTotalBytes int64 `koanf:"flight-max-total-bytes"`
	// FlightOnDesignedFence: a designed fence (a disconnect expiry, a
	// member replaced by identity, a session expiry of a closed
	// connection) writes the flight recorder too. Off: those are the
	// designed end of every rolling step, logged at info, and a file (and
	// its warning) is for what an operator must act on.
	FlightOnDesignedFence bool `koanf:"flight-on-designed-fence"`
}

// DefaultCapture is off, with 5 × 64 MiB files and 32 × 2 MiB flight
// recorders of 5 minutes when turned on, and at most 32 flight-recorder
// files of 64 MiB in all on disk.
func DefaultCapture() Capture {
	return Capture{MaxBytes: 64 << 20, MaxFiles: 5, FlightWindow: 5 * time.Minute, FlightMaxBytes: 2 << 20, FlightMaxGroups: 32,
		FlightMaxFiles: 32, FlightMaxTotalBytes: 64 << 20}
}

// List splits a comma-separated key's value, blank entries dropped: the
// streams group configs' reading of Kafka's LIST values.
func List(s string) []string { return streams.ParseList(s) }

func (c Capture) validate() []string {
	var errs []string
	// Checked here, not when the recorder starts, so that a bad name is a
	// configuration error like any other (naming where it was set).
	if _, err := capture.ParseAPIKeys(List(c.APIKeys)); err != nil {
		errs = append(errs, fmt.Sprintf("capture.api-keys %q: %v", c.APIKeys, err))
	}
	if c.MaxBytes < 4096 {
		errs = append(errs, fmt.Sprintf("capture.max-bytes: must be >= 4096, got %d", c.MaxBytes))
	}
	if c.MaxFiles < 1 {
		errs = append(errs, fmt.Sprintf("capture.max-files: must be >= 1, got %d", c.MaxFiles))
	}
	if c.FlightWindow <= 0 {
		errs = append(errs, fmt.Sprintf("capture.flight-window: must be positive, got %v", c.FlightWindow))
	}
	if c.FlightMaxBytes < 4096 {
		errs = append(errs, fmt.Sprintf("capture.flight-max-bytes: must be >= 4096, got %d", c.FlightMaxBytes))
	}
	if c.FlightMaxGroups < 1 {
		errs = append(errs, fmt.Sprintf("capture.flight-max-groups: must be >= 1, got %d", c.FlightMaxGroups))
	}
	if c.FlightMaxFiles < 1 {
		errs = append(errs, fmt.Sprintf("capture.flight-max-files: must be >= 1, got %d", c.FlightMaxFiles))
	}
	if c.FlightMaxTotalBytes < int64(c.FlightMaxBytes) {
		errs = append(errs, fmt.Sprintf("capture.flight-max-total-bytes: must hold one flight recorder (>= capture.flight-max-bytes %d), got %d", c.FlightMaxBytes, c.FlightMaxTotalBytes))
	}
	return errs
}
