package kafkaframe

import (
	"bytes"
	"encoding/binary"
	"net"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestRequestHeaderVersions: a request is framed with header v2 at a
// flexible version, v1 below it and v0 for ControlledShutdown v0, and
// ParseRequestHeader reads back its key, version, correlation and client
// ids and where its body starts.
func TestRequestHeaderVersions(t *testing.T) {
	id := "client"
	for _, req := range []kmsg.Request{
		&kmsg.HeartbeatRequest{Version: 3, Group: "g"}, // header v1
		&kmsg.HeartbeatRequest{Version: 4, Group: "g"}, // header v2
		&kmsg.ControlledShutdownRequest{Version: 0},    // header v0
	} {
		frame := AppendRequest([]byte("x"), 7, &id, req)[1:]
		if Size(frame) != len(frame)-4 {
			t.Fatalf("%T v%d: size prefix %d for %d bytes", req, req.GetVersion(), Size(frame), len(frame)-4)
		}
		h, err := ParseRequestHeader(frame[4:])
		if err != nil {
			t.Fatalf("%T v%d: %v", req, req.GetVersion(), err)
		}
		wantID := req.Key() != int16(kmsg.ControlledShutdown)
		if h.Key != req.Key() || h.Version != req.GetVersion() || h.Corr != 7 || (h.ClientID != nil) != wantID {
			t.Fatalf("%T v%d: read %+v", req, req.GetVersion(), h)
		}
		if body := req.AppendTo(nil); !bytes.Equal(frame[4+h.BodyAt:], body) {
			t.Fatalf("%T v%d: body at %d is %x, want %x", req, req.GetVersion(), h.BodyAt, frame[4+h.BodyAt:], body)
		}
	}
}

// TestReadBounds: a frame beyond the limit, or under 4 bytes, is refused
// from its size prefix before anything else is read.
func TestReadBounds(t *testing.T) {
	for _, size := range []int32{101, -1, 3} {
		prefix := binary.BigEndian.AppendUint32(nil, uint32(size))
		if _, err := Read(bytes.NewReader(prefix), 100); err == nil {
			t.Fatalf("size %d read within a limit of 100", size)
		}
	}
	if _, err := Read(bytes.NewReader(binary.BigEndian.AppendUint32(nil, 101)), 100); !strings.Contains(err.Error(), "limits.max-frame-bytes") {
		t.Fatalf("beyond the limit: %v, want it to name limits.max-frame-bytes", err)
	}
}

// TestRoundTrip: one exchange writes the request and decodes the answer of
// its correlation id; an answer of another id is an error.
func TestRoundTrip(t *testing.T) {
	for _, answerCorr := range []int32{5, 6} {
		client, server := net.Pipe()
		go func() {
			defer server.Close()
			msg, err := Read(server, 1<<20)
			if err != nil {
				return
			}
			h, _ := ParseRequestHeader(msg)
			resp := kmsg.NewPtrApiVersionsResponse()
			resp.Version = h.Version
			_, _ = server.Write(AppendResponse(nil, answerCorr, resp))
		}()
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = 3
		r, err := RoundTrip(client, 5, nil, req, 1<<20)
		client.Close()
		if answerCorr == 5 && (err != nil || r.(*kmsg.ApiVersionsResponse).GetVersion() != 3) {
			t.Fatalf("answer of the same id: %v %v", r, err)
		}
		if answerCorr != 5 && err == nil {
			t.Fatal("an answer of another correlation id was taken")
		}
	}
}
