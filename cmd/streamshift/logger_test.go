package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/streamshift/streamshift/config"
)

// Client-supplied ids of 1 MiB make log lines of bounded size, in both
// formats.
func TestLoggerBoundsLines(t *testing.T) {
	id := strings.Repeat("m", 1<<20)
	for _, format := range []string{"json", "console"} {
		var buf bytes.Buffer
		log := newLoggerTo(config.Log{Level: "info", Format: format}, &buf)
		log.Info().Str("group", id).Str("member", id).Msgf("[GroupId %s] Member %s joined the group.", id, id)
		if n := buf.Len(); n > 8<<10 {
			t.Errorf("%s: a line of %d bytes", format, n)
		}
		if !strings.Contains(buf.String(), "…(1048576 bytes)") {
			t.Errorf("%s: the cut value's length is missing", format)
		}
	}
}
