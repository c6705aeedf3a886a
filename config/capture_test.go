package config

import (
	"io"
	"strings"
	"testing"
)

// The flight-recorder caps on disk are read from the environment (as from
// the file and flags) and checked: at least one file, room for one recorder.
func TestCaptureFlightCaps(t *testing.T) {
	cfg, _, err := Load([]string{"--upstream", "a:1"}, []string{"STREAMSHIFT_CAPTURE_FLIGHT_MAX_FILES=3", "STREAMSHIFT_CAPTURE_FLIGHT_MAX_TOTAL_BYTES=8388608"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Capture.FlightMaxFiles != 3 || cfg.Capture.FlightMaxTotalBytes != 8<<20 {
		t.Fatalf("flight caps %d files %d bytes", cfg.Capture.FlightMaxFiles, cfg.Capture.FlightMaxTotalBytes)
	}
	if d := DefaultCapture(); d.FlightMaxFiles != 32 || d.FlightMaxTotalBytes != 64<<20 {
		t.Fatalf("defaults %d files %d bytes", d.FlightMaxFiles, d.FlightMaxTotalBytes)
	}
	_, _, err = Load([]string{"--upstream", "a:1"}, []string{"STREAMSHIFT_CAPTURE_FLIGHT_MAX_FILES=0", "STREAMSHIFT_CAPTURE_FLIGHT_MAX_TOTAL_BYTES=1024"}, io.Discard)
	for _, w := range []string{"capture.flight-max-files: must be >= 1", "capture.flight-max-total-bytes: must hold one flight recorder"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v lacks %q", err, w)
		}
	}
}
