package peer

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// An answer frame on a link is bounded by limits.max-frame-bytes
// (LinkOptions.MaxFrameBytes), as a request frame on the internal
// listener is: a larger one is refused from its size prefix, before any
// byte of it is allocated or waited for. The link drops with an error that
// names the frame's size and the bound, and every call waiting on it is
// answered COORDINATOR_NOT_AVAILABLE (the client retries, as after a
// broker disconnect).

// hugeAnswerPeer is a fake internal listener: it brings links up
// (ApiVersions listing Envelope v0) and answers every envelope with the
// size prefix of a frame of size bytes, and nothing after it, keeping the
// connection open: a reader that allocated the frame first would wait
// for its body until the call's hour-long time limit.
func hugeAnswerPeer(t *testing.T, size uint32) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	serve := func(conn net.Conn) {
		defer conn.Close()
		for {
			msg, err := kafkaframe.Read(conn, 1<<20)
			if err != nil {
				return
			}
			h, err := kafkaframe.ParseRequestHeader(msg)
			if err != nil {
				return
			}
			var frame []byte
			switch h.Key {
			case int16(kmsg.ApiVersions):
				frame = kafkaframe.AppendResponse(nil, h.Corr, apiVersions(h.Version, false))
			default:
				frame = binary.BigEndian.AppendUint32(nil, size)
			}
			if _, err := conn.Write(frame); err != nil {
				return
			}
		}
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(conn)
		}
	}()
	return ln
}

func TestPeerLinkRefusesAnswerBeyondMaxFrameBytes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		size     uint32
		maxFrame int
	}{
		{"just beyond the bound", 64<<10 + 1, 64 << 10},
		{"beyond any bound (2 GiB)", 1<<31 - 1, 100 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln := hugeAnswerPeer(t, tc.size)
			var refused refusals
			l := NewLink(LinkOptions{Self: "origin", Peer: "owner", Addr: ln.Addr().String(), MaxFrameBytes: tc.maxFrame,
				Refused: refused.add, Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)})
			t.Cleanup(l.Close)
			waitFor(t, "link up", func() error {
				if !l.Up() {
					return errNotYet
				}
				return nil
			})
			done := make(chan error, 1)
			go func() {
				_, err := l.Call(context.Background(), principalOf(KindServe), peerRequest(1), localhost(), time.Hour)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("a call whose answer frame claims %d bytes (bound %d) still waits: the frame was taken, not refused", tc.size, tc.maxFrame)
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.Code != kerr.CoordinatorNotAvailable.Code || Result(err) != LinkDown {
				t.Fatalf("call answered by an oversized frame: %v (result %s), want COORDINATOR_NOT_AVAILABLE, link_down", err, Result(err))
			}
			for _, want := range []string{"link lost", "limits.max-frame-bytes"} {
				if !strings.Contains(pe.Reason, want) {
					t.Errorf("the error %q does not say %q", pe.Reason, want)
				}
			}
		})
	}
}

// TestPeerListenerAnswerBeyondMaxFrameBytes: the owner does not send an
// answer its peers would refuse (both ends bound frames by
// limits.max-frame-bytes): that call alone is answered
// COORDINATOR_NOT_AVAILABLE, and a call waiting on the same link meanwhile
// still gets its answer on a link that stayed up.
func TestPeerListenerAnswerBeyondMaxFrameBytes(t *testing.T) {
	const maxFrame = 64 << 10
	release := make(chan struct{})
	held := make(chan struct{})
	var served refusals
	_, l := startPeerPair(t, map[CallKind]blockingHandler{KindServe: func(_ context.Context, c *Call) ([]byte, int16) {
		switch c.Corr {
		case 1: // answered beyond the bound
			return make([]byte, maxFrame+1), 0
		case 2: // held until the oversized answer was dealt with
			close(held)
			<-release
		}
		return echoData(c), 0
	}}, func(o *ListenerOptions) {
		o.MaxFrameBytes = maxFrame
		o.Served = func(_ CallKind, result string) { served.add(result) }
	}, func(o *LinkOptions) { o.MaxFrameBytes = maxFrame })
	heldDone := make(chan error, 1)
	go func() {
		data, err := l.Call(context.Background(), principalOf(KindServe), peerRequest(2), localhost(), time.Hour)
		if err == nil && binary.BigEndian.Uint32(data) != 2 {
			err = errors.New("another call's answer")
		}
		heldDone <- err
	}()
	<-held
	_, err := l.Call(context.Background(), principalOf(KindServe), peerRequest(1), localhost(), time.Hour)
	var pe *Error
	if !errors.As(err, &pe) || pe.Code != kerr.CoordinatorNotAvailable.Code || Result(err) == LinkDown {
		t.Fatalf("a call whose answer is beyond the bound: %v (result %s), want the owner's COORDINATOR_NOT_AVAILABLE, the link kept", err, Result(err))
	}
	close(release)
	if err := <-heldDone; err != nil {
		t.Fatalf("a call on the same link while the oversized answer was refused: %v", err)
	}
	if st := l.Status(); !st.Up || st.LastError != "" {
		t.Fatalf("the link after an oversized answer: %+v, want up and never down", st)
	}
	if served.get(Refused) != 1 {
		t.Errorf("the owner told %d calls refused, want 1", served.get(Refused))
	}
}
