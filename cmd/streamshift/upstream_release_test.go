package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// TestCheckUpstreamRelease: a broker older than the tested range gets a
// warning at start, never silence; 2.8 to 3.9 pass quietly; a broker with
// streams groups of its own is told who serves them.
func TestCheckUpstreamRelease(t *testing.T) {
	k27 := map[int16]int16{0: 8, 1: 12, 3: 11, 11: 7} // no DescribeCluster
	k28 := map[int16]int16{0: 9, 3: 11, 60: 0}
	k44 := map[int16]int16{0: 13, 60: 2, 88: 1}
	for _, c := range []struct {
		name     string
		versions map[int16]int16
		tested   bool
		log      string
	}{
		{"2.7", k27, false, "older than Apache Kafka 2.8"},
		{"2.8", k28, true, ""},
		{"4.4", k44, true, "serves streams groups itself"},
		{"no answer", nil, false, ""},
	} {
		var buf bytes.Buffer
		if got := checkUpstreamRelease(c.versions, zerolog.New(&buf)); got != c.tested {
			t.Errorf("%s: tested %v, want %v", c.name, got, c.tested)
		}
		if c.log == "" && buf.Len() != 0 || c.log != "" && !strings.Contains(buf.String(), c.log) {
			t.Errorf("%s: logged %q, want %q", c.name, buf.String(), c.log)
		}
	}
}
