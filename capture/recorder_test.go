package capture

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// frames builds the request and response frames of an exchange.
func frames(corr int32, clientID string, req kmsg.Request, resp kmsg.Response) (rq, rs []byte) {
	msg := binary.BigEndian.AppendUint16(nil, uint16(req.Key()))
	msg = binary.BigEndian.AppendUint16(msg, uint16(req.GetVersion()))
	msg = binary.BigEndian.AppendUint32(msg, uint32(corr))
	msg = binary.BigEndian.AppendUint16(msg, uint16(len(clientID)))
	msg = append(msg, clientID...)
	if req.IsFlexible() {
		msg = append(msg, 0)
	}
	msg = req.AppendTo(msg)
	rq = binary.BigEndian.AppendUint32(nil, uint32(len(msg)))
	rq = append(rq, msg...)
	body := binary.BigEndian.AppendUint32(nil, uint32(corr))
	if resp.IsFlexible() && req.Key() != int16(kmsg.ApiVersions) {
		body = append(body, 0)
	}
	body = resp.AppendTo(body)
	rs = binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	return rq, append(rs, body...)
}

func heartbeatExchange(group, clientID string) *Exchange {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version = 4
	req.Group = group
	req.MemberID = "m-1"
	resp := kmsg.NewPtrHeartbeatResponse()
	resp.Version = 4
	resp.ErrorCode = 27 // REBALANCE_IN_PROGRESS
	rq, rs := frames(7, clientID, req, resp)
	now := time.Now()
	return &Exchange{ConnID: 1, ClientAddress: "127.0.0.1:5000", Key: req.Key(), Version: 4, CorrelationID: 7,
		Request: rq, Response: rs, Received: now, Answered: now.Add(time.Millisecond)}
}

func metadataExchange() *Exchange {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 9
	resp := kmsg.NewPtrMetadataResponse()
	resp.Version = 9
	rq, rs := frames(8, "app", req, resp)
	return &Exchange{Key: req.Key(), Version: 9, CorrelationID: 8, Request: rq, Response: rs, Received: time.Now(), Answered: time.Now()}
}

func readAll(t *testing.T, name string) []Line {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, problems := ReadLines(name, f)
	if len(problems) > 0 {
		t.Fatalf("problems %v", problems)
	}
	return lines
}

// records are the exchange and event lines of lines (not the header and
// connection lines).
func records(lines []Line) []Line {
	var out []Line
	for _, l := range lines {
		if l.Type == TypeExchange || l.Type == TypeEvent {
			out = append(out, l)
		}
	}
	return out
}

// TestRecorderFilters: a capture of one group copies the group APIs only,
// writes that group's exchanges and events, decoded, and nothing of others.
func TestRecorderFilters(t *testing.T) {
	file := filepath.Join(t.TempDir(), "capture.jsonl")
	r, err := New(Options{Instance: "p1", File: file, Groups: []string{"g1"}, MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Wants(int16(kmsg.Heartbeat)) || r.Wants(int16(kmsg.Produce)) || r.Wants(int16(kmsg.Metadata)) {
		t.Fatal("a group capture must want the group APIs only")
	}
	r.Exchange(heartbeatExchange("g1", "app-1"))
	r.Exchange(heartbeatExchange("other", "app-2"))
	r.Event(Event{Kind: streams.EventGroupEpochBumped, Group: "g1", Member: "m-1", Reason: "member joined"})
	r.Event(Event{Kind: streams.EventGroupEpochBumped, Group: "other"})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	lines := records(readAll(t, file))
	if len(lines) != 2 {
		t.Fatalf("%d lines, want the g1 exchange and event: %+v", len(lines), lines)
	}
	x := lines[0]
	if x.Type != "exchange" || x.APIName != "Heartbeat" || x.ClientID != "app-1" || x.Instance != "p1" || x.LatencyMs != 1 ||
		len(x.ErrorCodes) != 1 || x.ErrorCodes[0] != 27 || !strings.Contains(string(x.Request), `"groupId":"g1"`) {
		t.Errorf("exchange line %+v", x)
	}
	if lines[1].Type != "event" || lines[1].Reason != "member joined" {
		t.Errorf("event line %+v", lines[1])
	}
}

// TestRecorderOffIsOff: without a file or a group started nothing is wanted.
func TestRecorderOffIsOff(t *testing.T) {
	r, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for k := int16(0); k < 256; k++ {
		if r.Wants(k) {
			t.Fatalf("key %d wanted with capture off", k)
		}
	}
	if err := r.StartGroup("g"); err != nil {
		t.Fatal(err)
	}
	if !r.Wants(int16(kmsg.JoinGroup)) || r.Wants(int16(kmsg.Fetch)) {
		t.Fatal("a started group wants its group APIs only")
	}
	r.StopGroup("g")
	if r.Wants(int16(kmsg.JoinGroup)) {
		t.Fatal("stopped group still wanted")
	}
}

// TestRecorderRotation: past max-bytes the file rotates, rotated files are
// gzipped, and no more than max-files remain.
func TestRecorderRotation(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "capture.jsonl")
	r, err := New(Options{File: file, MaxBytes: 4096, MaxFiles: 3})
	if err != nil {
		t.Fatal(err)
	}
	for range 200 {
		r.Exchange(metadataExchange())
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	gz, _ := filepath.Glob(file + ".*.gz")
	all, _ := filepath.Glob(file + "*")
	if len(gz) != 2 || len(all) != 3 {
		t.Fatalf("files %v, want the live file and 2 gzipped ones", all)
	}
	for _, name := range append(gz, file) {
		st, _ := os.Stat(name)
		f, _ := os.Open(name)
		var rd io.Reader = f
		if strings.HasSuffix(name, ".gz") {
			zr, err := gzip.NewReader(f)
			if err != nil {
				t.Fatal(err)
			}
			rd = zr
		}
		b, _ := io.ReadAll(rd)
		f.Close()
		if len(b) > 4096 || !bytes.Contains(b, []byte(`"apiName":"Metadata"`)) || st.Size() == 0 {
			t.Errorf("%s: %d bytes uncompressed", name, len(b))
		}
	}
}

// TestRecorderFullDisk: a failed write (a full disk) stops the capture file
// and the recorder wants nothing more, without failing its caller.
func TestRecorderFullDisk(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	r, err := New(Options{File: "/dev/full", MaxBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	r.Exchange(metadataExchange())
	r.Exchange(metadataExchange())
	if err := r.Close(); err != nil {
		t.Log(err)
	}
	st := r.Status()
	if st.FileOn || !strings.Contains(st.FileError, "no space") {
		t.Fatalf("status %+v, want the file stopped on ENOSPC", st)
	}
}

// TestFlightRecorderBounds: a group's ring keeps at most its byte bound and
// its window, and the total is the groups' cap times it.
func TestFlightRecorderBounds(t *testing.T) {
	fr := &flightRecorder{group: "g", maxBytes: 10 << 10, window: time.Minute}
	start := time.Now()
	line := bytes.Repeat([]byte("x"), 300)
	for i := range 10000 {
		fr.add(start.Add(time.Duration(i)*time.Millisecond), line)
		if fr.bytes > fr.maxBytes {
			t.Fatalf("ring holds %d bytes, bound %d", fr.bytes, fr.maxBytes)
		}
	}
	if fr.memory() > 2*fr.maxBytes {
		t.Fatalf("ring memory %d for a %d-byte bound", fr.memory(), fr.maxBytes)
	}
	fr.add(start.Add(time.Hour), line)
	if fr.len() != 1 {
		t.Fatalf("%d lines past the window, want 1", fr.len())
	}
	r, _ := New(Options{FlightMaxGroups: 2})
	defer r.Close()
	for _, g := range []string{"a", "b"} {
		if err := r.StartGroup(g); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.StartGroup("c"); err == nil {
		t.Fatal("a third flight recorder past the cap of 2")
	}
}

// BenchmarkFlightRecorder reports the memory a group's ring holds when full
// of group traffic (heartbeat lines), per group.
func BenchmarkFlightRecorder(b *testing.B) {
	d := decodeExchange(heartbeatExchange("g", "app-StreamThread-1-consumer"), "p", time.Now())
	r := &Recorder{}
	line := r.marshal(nil, &d.line)
	fr := &flightRecorder{group: "g", maxBytes: 2 << 20, window: 5 * time.Minute}
	at := time.Now()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		fr.add(at.Add(time.Duration(i)*time.Millisecond), bytes.Clone(line))
	}
	b.ReportMetric(float64(fr.memory()), "B/group")
	b.ReportMetric(float64(fr.len()), "lines/group")
}

// BenchmarkWantsOff is the cost on the proxy's loop of a capture that is off.
func BenchmarkWantsOff(b *testing.B) {
	r, _ := New(Options{})
	defer r.Close()
	b.ReportAllocs()
	for b.Loop() {
		if r.Wants(int16(kmsg.Produce)) {
			b.Fatal("wanted")
		}
	}
}
