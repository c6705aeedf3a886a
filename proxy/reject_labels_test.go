package proxy

import (
	"encoding/binary"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestRejectReasonsAreBounded: streamshift_frames_rejected_total's reason
// label is one of a fixed few whatever the client sends; the numbers of a
// bad frame (its size, the advertised version) go to the log line only.
// Before, every oversized frame size made a series of its own: a client
// could grow the scrape without bound.
func TestRejectReasonsAreBounded(t *testing.T) {
	t.Parallel()
	b := startRecordingBroker(t)
	p := startProxy(t, []string{b.addr()}, nil)
	waitFor(t, "proxy ready", func() error {
		if !p.Ready() {
			return errNotYet
		}
		return nil
	})
	for i := 0; i < 20; i++ {
		rc := dialRaw(t, p.NodeAddr(0))
		var size [4]byte
		binary.BigEndian.PutUint32(size[:], uint32(200<<20+i)) // above max-frame-bytes, each its own
		_, _ = rc.Write(size[:])
		rc.expectClosed()
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(p.m.frameRejected)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := 0
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			series++
			if v := m.GetCounter().GetValue(); v != 20 {
				t.Errorf("%s: %v, want 20", labelsOf(m), v)
			}
		}
	}
	if series != 1 {
		t.Fatalf("20 frames of 20 bad sizes made %d series of streamshift_frames_rejected_total, want 1", series)
	}
}

func labelsOf(m *dto.Metric) string {
	s := ""
	for _, l := range m.GetLabel() {
		s += l.GetName() + "=" + l.GetValue() + " "
	}
	return s
}
