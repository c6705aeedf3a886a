package capture

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Flight-recorder files on disk are bounded two ways:
//   - one file per incident: a group failing again and again (a takeover
//     retried every few seconds, members fenced one after the other) is one
//     incident until the group's takeover or hand-back succeeds or a quiet
//     flight window passes without a failure; only its first failure writes
//     a file (the ring then holds what led to it);
//   - FlightMaxFiles files and FlightMaxTotalBytes bytes in FlightDir, files
//     left there by an earlier run included: before a file is written the
//     oldest are removed.

const (
	flightFilePrefix = "streamshift-flight-"
	flightFileSuffix = ".jsonl"
)

// flightIncident reports whether a failure at at belongs to the group's
// current incident (and extends it), or starts a new one.
func (fr *flightRecorder) flightIncident(at time.Time, quiet time.Duration) (ongoing bool) {
	ongoing = !fr.incidentLast.IsZero() && at.Sub(fr.incidentLast) <= quiet
	if !ongoing {
		fr.incidentFailures = 0
	}
	fr.incidentLast = at
	fr.incidentFailures++
	return ongoing
}

// endIncident: the group's takeover or hand-back succeeded.
func (fr *flightRecorder) endIncident() {
	fr.incidentLast, fr.incidentFailures = time.Time{}, 0
}

// dumpLocked writes a group's flight recorder to a file of its own, after
// removing the oldest files past the caps.
func (r *Recorder) dumpLocked(fr *flightRecorder, why *Event) {
	data := fr.snapshot(why.At)
	name := filepath.Join(r.o.FlightDir, fmt.Sprintf("%s%s-%s%s", flightFilePrefix, sanitize(fr.group), why.At.UTC().Format("20060102T150405.000"), flightFileSuffix))
	r.pruneFlightDirLocked(int64(len(data)))
	if err := os.WriteFile(name, data, 0o600); err != nil {
		r.o.Log.Error().Err(err).Str("group", fr.group).Msg("flight recorder not written")
		return
	}
	r.m.dumps.Inc()
	// A warning is for what an operator must act on; a designed fence
	// written because capture.flight-on-designed-fence asked is info.
	ev := r.o.Log.Warn()
	if why.designedFence() {
		ev = r.o.Log.Info()
	}
	ev.Str("group", fr.group).Str("event", why.Kind).Str("reason", why.Reason).Str("file", name).
		Msg("flight recorder written; further failures of the group are the same incident until it succeeds or a quiet capture.flight-window passes")
}

// flightFile is a flight-recorder file found in FlightDir.
type flightFile struct {
	name string
	size int64
	mod  time.Time
}

// pruneFlightDirLocked removes the oldest flight-recorder files of
// FlightDir until one more file of size bytes fits both caps.
func (r *Recorder) pruneFlightDirLocked(size int64) {
	entries, err := os.ReadDir(r.o.FlightDir)
	if err != nil {
		return // the write reports the directory's problem
	}
	var files []flightFile
	var total int64
	for _, e := range entries {
		n := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(n, flightFilePrefix) || !strings.HasSuffix(n, flightFileSuffix) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		files = append(files, flightFile{name: n, size: info.Size(), mod: info.ModTime()})
		total += info.Size()
	}
	slices.SortFunc(files, func(a, b flightFile) int {
		return cmp.Or(a.mod.Compare(b.mod), strings.Compare(a.name, b.name))
	})
	for len(files) > 0 && (len(files)+1 > r.o.FlightMaxFiles || total+size > r.o.FlightMaxTotalBytes) {
		f := files[0]
		files = files[1:]
		if err := os.Remove(filepath.Join(r.o.FlightDir, f.name)); err != nil && !os.IsNotExist(err) {
			r.o.Log.Error().Err(err).Str("file", f.name).Msg("old flight recorder file not removed")
			continue
		}
		total -= f.size
		r.m.flightRemoved.Inc()
		r.o.Log.Info().Str("file", f.name).Int("max_files", r.o.FlightMaxFiles).Int64("max_total_bytes", r.o.FlightMaxTotalBytes).
			Msg("oldest flight recorder file removed: capture.flight-max-files or capture.flight-max-total-bytes reached")
	}
}
