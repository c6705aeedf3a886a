package harness

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/testpki"
)

// readRequest reads one request frame and decodes its header (v1 or v2).
func readRequest(t *testing.T, r io.Reader) (key, version int16, corr int32, clientID string, body []byte) {
	t.Helper()
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(r, b); err != nil {
		t.Fatal(err)
	}
	key, version = int16(binary.BigEndian.Uint16(b)), int16(binary.BigEndian.Uint16(b[2:]))
	corr = int32(binary.BigEndian.Uint32(b[4:]))
	n := int(binary.BigEndian.Uint16(b[8:]))
	clientID = string(b[10 : 10+n])
	return key, version, corr, clientID, b[10+n:]
}

func TestRequestFrameDecodes(t *testing.T) {
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 4
	md.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("t")}}
	frame := RequestFrame(md, 7)
	if got := int(binary.BigEndian.Uint32(frame)); got != len(frame)-4 {
		t.Fatalf("size prefix %d, frame %d", got, len(frame)-4)
	}
	key, version, corr, id, body := readRequest(t, bytes.NewReader(frame))
	if key != 3 || version != 4 || corr != 7 || id != attackClientID {
		t.Fatalf("header: key %d v%d corr %d client %q", key, version, corr, id)
	}
	back := kmsg.NewPtrMetadataRequest()
	back.Version = 4
	if err := back.ReadFrom(body); err != nil || len(back.Topics) != 1 || *back.Topics[0].Topic != "t" {
		t.Fatalf("body: %v %+v", err, back.Topics)
	}
}

func TestRawFrameUnknownKey(t *testing.T) {
	key, version, corr, id, body := readRequest(t, bytes.NewReader(RawFrame(999, 0, 3, []byte{1, 2})))
	if key != 999 || version != 0 || corr != 3 || id != attackClientID || string(body) != "\x01\x02" {
		t.Fatalf("got key %d v%d corr %d client %q body %v", key, version, corr, id, body)
	}
}

func TestFramePrefixClaimsSize(t *testing.T) {
	jg := kmsg.NewPtrJoinGroupRequest()
	jg.Version = 5
	jg.Group, jg.ProtocolType = "g", "consumer"
	p, err := FramePrefix(jg, 100<<20)
	if err != nil {
		t.Fatal(err)
	}
	if got := binary.BigEndian.Uint32(p); got != 100<<20 {
		t.Fatalf("size prefix %d", got)
	}
	if key := binary.BigEndian.Uint16(p[4:]); key != 11 {
		t.Fatalf("key %d, want JoinGroup 11", key)
	}
	if _, err := FramePrefix(jg, 3); err == nil {
		t.Fatal("a size below the request's bytes must fail")
	}
}

func TestLoopbackSources(t *testing.T) {
	s := LoopbackSources(0, 252)
	if s[0] != "127.0.0.2" || s[249] != "127.0.0.251" || s[250] != "127.0.1.2" || s[251] != "127.0.1.3" {
		t.Fatalf("sources %v ... %v", s[:2], s[249:])
	}
}

// serve accepts on a loopback listener and runs handle per connection.
func serve(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
			go handle(c)
		}
	}()
	return l.Addr().String()
}

func TestProbeOutcomes(t *testing.T) {
	answer := serve(t, func(c net.Conn) {
		for {
			var size [4]byte
			if _, err := io.ReadFull(c, size[:]); err != nil {
				return
			}
			if _, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(size[:]))); err != nil {
				return
			}
			_, _ = c.Write([]byte{0, 0, 0, 4, 0, 0, 0, 1})
		}
	})
	closer := serve(t, func(c net.Conn) { c.Close() })
	staller := serve(t, func(c net.Conn) {})
	for _, tc := range []struct {
		addr string
		want Outcome
	}{{answer, Answered}, {closer, Closed}, {staller, Stalled}} {
		c, err := DialFrom("127.0.0.2", tc.addr, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if got := Probe(c, 300*time.Millisecond); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.addr, got, tc.want)
		}
		if got := c.LocalAddr().(*net.TCPAddr).IP.String(); got != "127.0.0.2" {
			t.Errorf("source %s, want 127.0.0.2", got)
		}
		c.Close()
	}

	f := OpenFlood(context.Background(), TCPDialer(answer, time.Second), LoopbackSources(0, 3), 7, 3, time.Second)
	if f.Answered != 7 || len(f.Open) != 7 {
		t.Fatalf("flood on an answering server: %+v", f)
	}
	f.Close()
	f = OpenFlood(context.Background(), TCPDialer(closer, time.Second), LoopbackSources(0, 2), 5, 5, time.Second)
	if f.Closed != 5 || len(f.Open) != 0 {
		t.Fatalf("flood on a closing server: %+v", f)
	}
}

func TestWaitClosedAndPipeline(t *testing.T) {
	closeLater := serve(t, func(c net.Conn) { time.Sleep(100 * time.Millisecond); c.Close() })
	staller := serve(t, func(c net.Conn) {})
	a, _ := DialFrom("", closeLater, time.Second)
	b, _ := DialFrom("", staller, time.Second)
	defer a.Close()
	defer b.Close()
	if n := CountClosed([]net.Conn{a, b}, time.Second); n != 1 {
		t.Fatalf("closed %d, want 1 (the closing server's)", n)
	}
	// A server that never reads: the socket buffers fill and a write blocks.
	c, _ := DialFrom("", staller, time.Second)
	defer c.Close()
	written, blocked, err := Pipeline(c, [][]byte{apiVersionsFrame()}, 10*time.Second, 200*time.Millisecond)
	if err != nil || !blocked || written == 0 {
		t.Fatalf("pipeline into a non-reader: %d bytes, blocked %v, %v", written, blocked, err)
	}
	d, _ := DialFrom("", staller, time.Second)
	defer d.Close()
	n, err := SendPartial(d, []byte{0, 0, 1, 0}, 64<<20, 200*time.Millisecond)
	if err == nil || IsClosedErr(err) || n == 0 || n >= 64<<20 {
		t.Fatalf("partial frame into a non-reader: %d bytes, %v (want a stall)", n, err)
	}
}

func TestReadResponse(t *testing.T) {
	resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	resp.ErrorCode = 42
	msg := "too big"
	resp.ErrorMessage = &msg
	body := binary.BigEndian.AppendUint32(nil, 9)
	body = append(body, 0) // flexible header: no tagged fields
	body = resp.AppendTo(body)
	addr := serve(t, func(c net.Conn) {
		_, _ = c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...))
		c.Close()
	})
	c, err := DialFrom("", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	corr, err := ReadResponse(c, got, time.Second)
	if err != nil || corr != 9 || got.ErrorCode != 42 || got.ErrorMessage == nil || *got.ErrorMessage != msg {
		t.Fatalf("corr %d, %+v, %v", corr, got, err)
	}
	if _, err := ReadResponse(c, got, time.Second); !IsClosedErr(err) {
		t.Fatalf("after the server closed: %v, want a close", err)
	}
}

func TestTLSDialerChecksAddrHost(t *testing.T) {
	ca, err := testpki.NewCA("attack-ca")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := ca.IssueNow("attack", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := pair.TLS()
	if err != nil {
		t.Fatal(err)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var size [4]byte
				if _, err := io.ReadFull(c, size[:]); err == nil {
					_, _ = io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(size[:])))
					_, _ = c.Write([]byte{0, 0, 0, 4, 0, 0, 0, 1})
				}
			}()
		}
	}()
	// No ServerName in the config: the dialer checks the address's host.
	f := OpenFlood(context.Background(), TLSDialer(l.Addr().String(), &tls.Config{RootCAs: ca.Pool()}, time.Second), LoopbackSources(0, 2), 4, 4, time.Second)
	defer f.Close()
	if f.Answered != 4 {
		t.Fatalf("TLS flood on a TLS server: %+v", f)
	}
	f = OpenFlood(context.Background(), TLSDialer(l.Addr().String(), &tls.Config{}, time.Second), LoopbackSources(0, 1), 2, 2, time.Second)
	if f.Closed != 2 {
		t.Fatalf("an unknown CA must fail the handshake: %+v", f)
	}
}
