package capture

import (
	"os"
	"testing"
	"time"
)

// testdata/wordcount-roll.jsonl.gz is a real run's capture (the group's
// lines only) of the README's five-minute walkthrough, 2026-12-06:
// `streamshift demo` with capture on, Kafka Streams instances c1
// (kafka-streams 3.6, classic) and c2 (4.4, classic), c2 rolled to the
// streams protocol on its state directory (the takeover) and back (the
// hand-back), app.store=rocksdb.
func recordedRoll(t *testing.T) []Line {
	t.Helper()
	f, err := os.Open("testdata/wordcount-roll.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, problems := ReadLines("wordcount-roll.jsonl.gz", f)
	if len(problems) > 0 || len(lines) == 0 {
		t.Fatalf("%d lines, problems %v", len(lines), problems)
	}
	return lines
}

// On the recorded run: each instance by host, process and thread, c2 the
// same across its switch to streams and back; the takeover took from c2's
// first StreamsGroupHeartbeat until the coordinator said every task ran
// (1.001 s, its state flip 2 ms), the hand-back from c2's leave until
// the broker's group gave every task out again (4.404 s, its flip 3.876 s
// of barrier).
func TestTimelineRecordedRoll(t *testing.T) {
	tl := BuildTimeline(recordedRoll(t), "wordcount")
	if len(tl.Lanes) != 2 || tl.Lanes[0].Label != "127.0.0.1/f6c57e00 thread 1" || tl.Lanes[1].Label != "127.0.0.1/1dcbae61 thread 1" {
		t.Fatalf("lanes %v", labelsOf(tl))
	}
	var protos []string
	for _, p := range tl.Lanes[1].Protocols {
		protos = append(protos, p.Value)
	}
	if len(protos) != 3 || protos[0] != "classic" || protos[1] != "streams" || protos[2] != "classic" {
		t.Fatalf("c2's protocols %v, want classic, streams, classic in one lane", protos)
	}
	rel := func(at time.Time) time.Duration { return at.Sub(tl.Start).Round(time.Millisecond) }
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	if len(tl.Phases) != 2 {
		t.Fatalf("phases %+v", tl.Phases)
	}
	for i, want := range []struct {
		kind                 string
		began, settled, flip time.Duration
	}{
		{"takeover", ms(42048), ms(43049), ms(2)},
		{"hand-back", ms(72688), ms(77093), ms(3876)},
	} {
		p := tl.Phases[i]
		if p.Kind != want.kind || p.Outcome != "done" || rel(p.Began) != want.began || rel(p.Settled) != want.settled || p.Flip().Round(time.Millisecond) != want.flip {
			t.Errorf("%s %s: began +%v settled +%v flip %v; want %s began +%v settled +%v flip %v", p.Kind, p.Outcome, rel(p.Began), rel(p.Settled), p.Flip(),
				want.kind, want.began, want.settled, want.flip)
		}
	}
}

func labelsOf(tl *Timeline) []string {
	var out []string
	for _, ln := range tl.Lanes {
		out = append(out, ln.Label)
	}
	return out
}

// Replayed through a recorder, the run's events (a member replaced by
// identity at the takeover, no fencing) write no flight-recorder file;
// capture.flight-on-designed-fence writes one.
func TestFlightRecorderRecordedRoll(t *testing.T) {
	for _, onDesigned := range []bool{false, true} {
		dir := t.TempDir()
		r, err := New(Options{FlightDir: dir, FlightOnDesignedFence: onDesigned})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range recordedRoll(t) {
			if l.Type == "event" {
				r.Event(Event{Kind: l.Event, Group: l.Group, Member: l.Member, Reason: l.Reason, Fields: l.Fields, Message: l.Message, At: l.Wall})
			}
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		want := 0
		if onDesigned {
			want = 1
		}
		if files := flightFiles(t, dir); len(files) != want {
			t.Errorf("flight-on-designed-fence %v: files %v, want %d", onDesigned, files, want)
		}
	}
}
