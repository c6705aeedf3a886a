package proxy

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// recordingBroker is a fake upstream that answers the control plane and
// ApiVersions (Produce, Fetch, Metadata, ApiVersions, and ListOffsets v1..v2
// only), and records the key of every other request reaching it, answering
// each with an empty body.
type recordingBroker struct {
	*fakeBroker
	mu   sync.Mutex
	seen []kmsg.Key
}

func startRecordingBroker(t *testing.T) *recordingBroker {
	r := &recordingBroker{}
	r.fakeBroker = startFakeBroker(t, func(b *fakeBroker, c net.Conn) {
		var buf []byte
		for {
			h, msg, err := readRequest(c, buf)
			if err != nil {
				var ne net.Error
				if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne) {
					return
				}
				if len(msg) >= 2 { // a header it cannot parse: a key it does not know
					r.mu.Lock()
					r.seen = append(r.seen, kmsg.Key(binary.BigEndian.Uint16(msg)))
					r.mu.Unlock()
				}
				return
			}
			buf = msg
			if h.Key == int16(kmsg.ApiVersions) {
				av := kmsg.NewPtrApiVersionsResponse()
				av.SetVersion(h.Version)
				for _, k := range []kmsg.Key{kmsg.Produce, kmsg.Fetch, kmsg.Metadata, kmsg.ApiVersions} {
					av.ApiKeys = append(av.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: int16(k), MaxVersion: kmsg.RequestForKey(int16(k)).MaxVersion()})
				}
				av.ApiKeys = append(av.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: int16(kmsg.ListOffsets), MinVersion: 1, MaxVersion: 2})
				if _, err := c.Write(kafkaframe.AppendResponse(nil, h.Corr, av)); err != nil {
					return
				}
				continue
			}
			if out := b.controlPlaneAnswer(h); out != nil {
				if _, err := c.Write(out); err != nil {
					return
				}
				continue
			}
			r.mu.Lock()
			r.seen = append(r.seen, kmsg.Key(h.Key))
			r.mu.Unlock()
			var empty [8]byte
			binary.BigEndian.PutUint32(empty[:], 4)
			binary.BigEndian.PutUint32(empty[4:], uint32(h.Corr))
			if _, err := c.Write(empty[:]); err != nil {
				return
			}
		}
	})
	return r
}

func (r *recordingBroker) received() []kmsg.Key {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]kmsg.Key(nil), r.seen...)
}

// rawRequest is a request frame of any key and version with an empty body.
func rawRequest(key, version int16, corr int32) []byte {
	b := binary.BigEndian.AppendUint32(nil, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, 0xffff) // null client id
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// TestUnadvertisedRequestCloses: a request of a key or version the proxy
// did not advertise to the client closes its connection, as Kafka does,
// and never reaches the upstream: a key nobody knows (999) before any
// ApiVersions, a key the upstream's ApiVersions answer left out, a
// version above the advertised one. A known key is still forwarded before
// any ApiVersions (clients may skip it).
func TestUnadvertisedRequestCloses(t *testing.T) {
	t.Parallel()
	b := startRecordingBroker(t)
	p := startProxy(t, []string{b.addr()}, nil)
	waitFor(t, "proxy ready", func() error {
		if !p.Ready() {
			return errNotYet
		}
		return nil
	})

	// Before any ApiVersions a key kmsg knows is forwarded (the broker
	// answers it); after, one the answer advertised.
	rc := dialRaw(t, p.NodeAddr(0))
	if _, err := rc.Write(rawRequest(int16(kmsg.DescribeConfigs), 1, 3)); err != nil {
		t.Fatal(err)
	}
	if corr := frameCorr(rc.recv()); corr != 3 {
		t.Fatalf("correlation id %d", corr)
	}
	rc.served()
	if _, err := rc.Write(rawRequest(int16(kmsg.ListOffsets), 2, 4)); err != nil {
		t.Fatal(err)
	}
	if corr := frameCorr(rc.recv()); corr != 4 {
		t.Fatalf("correlation id %d", corr)
	}

	for name, send := range map[string]func(rc *rawConn){
		"unknown key before ApiVersions": func(rc *rawConn) {
			_, _ = rc.Write(rawRequest(999, 0, 1))
		},
		"key the answer left out": func(rc *rawConn) {
			rc.served() // the broker advertises no DescribeConfigs
			_, _ = rc.Write(rawRequest(int16(kmsg.DescribeConfigs), 1, 2))
		},
		"version above the advertised": func(rc *rawConn) {
			rc.served()
			_, _ = rc.Write(rawRequest(int16(kmsg.ListOffsets), 3, 2))
		},
		"version below the advertised": func(rc *rawConn) {
			rc.served()
			_, _ = rc.Write(rawRequest(int16(kmsg.ListOffsets), 0, 2))
		},
		"version above kmsg's before ApiVersions": func(rc *rawConn) {
			_, _ = rc.Write(rawRequest(int16(kmsg.Metadata), kmsg.NewPtrMetadataRequest().MaxVersion()+1, 2))
		},
	} {
		t.Run(name, func(t *testing.T) {
			rc := dialRaw(t, p.NodeAddr(0))
			rc.t = t
			send(rc)
			rc.expectClosed()
		})
	}
	if got := b.received(); len(got) != 2 || got[0] != kmsg.DescribeConfigs || got[1] != kmsg.ListOffsets {
		t.Fatalf("the upstream received %v, want the DescribeConfigs and ListOffsets that were advertised", got)
	}
	c, err := p.m.frameRejected.GetMetricWithLabelValues("unadvertised api key or version")
	if err != nil {
		t.Fatal(err)
	}
	if n := counterValue(t, c); n != 5 {
		t.Fatalf("rejected as unadvertised: %v, want 5", n)
	}
}
