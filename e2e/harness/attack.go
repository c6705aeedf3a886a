package harness

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Attack clients of the overload test (issue #26): raw TCP connections that
// misbehave on purpose (frame prefixes without the frame, pipelining without
// reading, connection floods). They speak just enough of the Kafka framing to
// be parsed as requests; every request is encoded by kmsg.

// attackClientID is the client id of every attack request.
const attackClientID = "overload-attack"

var attackFormatter = kmsg.NewRequestFormatter(kmsg.FormatterClientID(attackClientID))

// RequestFrame is r as one whole request frame (size prefix, header, body)
// at r's version.
func RequestFrame(r kmsg.Request, correlationID int32) []byte {
	return attackFormatter.AppendRequest(nil, r, correlationID)
}

// RawFrame is a frame of an arbitrary API key (an unknown one too) with a
// v1 request header (not flexible) and body.
func RawFrame(key, version int16, correlationID int32, body []byte) []byte {
	b := make([]byte, 4, 4+10+len(attackClientID)+len(body))
	b = binary.BigEndian.AppendUint16(b, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(version))
	b = binary.BigEndian.AppendUint32(b, uint32(correlationID))
	b = binary.BigEndian.AppendUint16(b, uint16(len(attackClientID)))
	b = append(b, attackClientID...)
	b = append(b, body...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// FramePrefix is the start of a frame that claims size bytes after the size
// prefix: the prefix and r's header and body as far as they go (the rest
// never comes, or comes as filler). size must be at least the encoded
// request's length.
func FramePrefix(r kmsg.Request, size int32) ([]byte, error) {
	whole := RequestFrame(r, 1)
	if int(size) < len(whole)-4 {
		return nil, fmt.Errorf("frame prefix: size %d is below the request's %d bytes", size, len(whole)-4)
	}
	binary.BigEndian.PutUint32(whole, uint32(size))
	return whole, nil
}

// DialFrom dials addr from the local address src (a loopback address such
// as 127.0.0.2, so a per-IP limit sees another client; "" lets the kernel
// choose).
func DialFrom(src, addr string, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	if src != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(src)}
	}
	return d.Dial("tcp", addr)
}

// Outcome is what became of an attack connection's request.
type Outcome int

const (
	Answered Outcome = iota // a whole response frame came back
	Closed                  // the peer closed or reset the connection
	Stalled                 // nothing within the timeout: the connection is open but not served
)

func (o Outcome) String() string {
	switch o {
	case Answered:
		return "answered"
	case Closed:
		return "closed"
	case Stalled:
		return "stalled"
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}

// apiVersionsFrame is an ApiVersions v3 request: what every Kafka client
// sends first.
func apiVersionsFrame() []byte {
	r := kmsg.NewPtrApiVersionsRequest()
	r.Version = 3
	r.ClientSoftwareName, r.ClientSoftwareVersion = "overload-attack", "0"
	return RequestFrame(r, 1)
}

// Probe sends one ApiVersions request on c and reads its response within
// timeout.
func Probe(c net.Conn, timeout time.Duration) Outcome {
	_ = c.SetDeadline(time.Now().Add(timeout))
	defer c.SetDeadline(time.Time{})
	if _, err := c.Write(apiVersionsFrame()); err != nil {
		return outcomeOf(err)
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return outcomeOf(err)
	}
	if _, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(size[:]))); err != nil {
		return outcomeOf(err)
	}
	return Answered
}

// outcomeOf classifies a read or write error: a timeout is a stall,
// anything else (EOF, reset, broken pipe) a close.
func outcomeOf(err error) Outcome {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return Stalled
	}
	return Closed
}

// Flood is a connection flood: the connections that were answered are kept
// open until Close.
type Flood struct {
	Open                               []net.Conn
	Answered, Closed, Stalled, Refused int // Refused: the dial itself failed
}

// Dialer opens one attack connection from a source address.
type Dialer func(src string) (net.Conn, error)

// TCPDialer dials addr over plain TCP.
func TCPDialer(addr string, timeout time.Duration) Dialer {
	return func(src string) (net.Conn, error) { return DialFrom(src, addr, timeout) }
}

// TLSDialer dials addr and completes a TLS handshake within timeout (the
// server name checked is addr's host unless cfg names one).
func TLSDialer(addr string, cfg *tls.Config, timeout time.Duration) Dialer {
	if cfg.ServerName == "" {
		cfg = cfg.Clone()
		cfg.ServerName, _, _ = net.SplitHostPort(addr)
	}
	return func(src string) (net.Conn, error) {
		c, err := DialFrom(src, addr, timeout)
		if err != nil {
			return nil, err
		}
		tc := tls.Client(c, cfg)
		_ = tc.SetDeadline(time.Now().Add(timeout))
		if err := tc.Handshake(); err != nil {
			c.Close()
			return nil, fmt.Errorf("tls handshake: %w", err)
		}
		_ = tc.SetDeadline(time.Time{})
		return tc, nil
	}
}

// OpenFlood opens n connections with dial, round-robin over the source
// addresses srcs, in batches of batch dials at once, each probed with
// ApiVersions (timeout each). Answered connections stay open; the others
// are closed. A dial refused by the kernel counts as Refused, one closed or
// stalled in a TLS handshake as Closed or Stalled. It stops early when ctx
// ends.
func OpenFlood(ctx context.Context, dial Dialer, srcs []string, n, batch int, timeout time.Duration) *Flood {
	f := &Flood{}
	var mu sync.Mutex
	for start := 0; start < n && ctx.Err() == nil; start += batch {
		var wg sync.WaitGroup
		for i := start; i < min(n, start+batch); i++ {
			wg.Add(1)
			go func(src string) {
				defer wg.Done()
				c, err := dial(src)
				o := Answered
				if err == nil {
					o = Probe(c, timeout)
				}
				mu.Lock()
				defer mu.Unlock()
				var op *net.OpError
				switch {
				case err != nil && errors.As(err, &op) && op.Op == "dial":
					f.Refused++
				case err != nil && outcomeOf(err) == Stalled:
					f.Stalled++
				case err != nil:
					f.Closed++
				case o == Answered:
					f.Answered++
					f.Open = append(f.Open, c)
					return
				case o == Closed:
					f.Closed++
				case o == Stalled:
					f.Stalled++
				}
				if c != nil {
					c.Close()
				}
			}(srcs[i%len(srcs)])
		}
		wg.Wait()
	}
	return f
}

// Total is the number of connections tried.
func (f *Flood) Total() int { return f.Answered + f.Closed + f.Stalled + f.Refused }

// Close closes the flood's open connections.
func (f *Flood) Close() {
	for _, c := range f.Open {
		c.Close()
	}
	f.Open = nil
}

// WaitClosed reads (and discards) from c until the peer closes it, true, or
// within passes, false.
func WaitClosed(c net.Conn, within time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(within))
	defer c.SetReadDeadline(time.Time{})
	_, err := io.Copy(io.Discard, c)
	return err == nil || outcomeOf(err) == Closed
}

// CountClosed waits on all conns at once and returns how many the peer
// closed within the duration.
func CountClosed(conns []net.Conn, within time.Duration) int {
	var n int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if WaitClosed(c, within) {
				mu.Lock()
				n++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return n
}

// SendPartial writes prefix, then filler bytes until send bytes (prefix
// included) are written, each write bounded by writeTimeout. It returns the
// bytes written; err is a close by the peer (or any other write error), or a
// stall (a write that did not finish within writeTimeout: the peer stopped
// reading).
func SendPartial(c net.Conn, prefix []byte, send int, writeTimeout time.Duration) (int, error) {
	written := 0
	write := func(b []byte) error {
		_ = c.SetWriteDeadline(time.Now().Add(writeTimeout))
		n, err := c.Write(b)
		written += n
		return err
	}
	defer c.SetWriteDeadline(time.Time{})
	if err := write(prefix[:min(len(prefix), send)]); err != nil {
		return written, err
	}
	filler := make([]byte, 256<<10)
	for written < send {
		if err := write(filler[:min(len(filler), send-written)]); err != nil {
			return written, err
		}
	}
	return written, nil
}

// Pipeline writes frames on c over and over without reading a byte until d
// passes or a write does not finish within stall (the peer stopped reading:
// blocked is true) or fails (err: the peer closed). It returns the bytes
// written. The frames go out in writes of about 64 KiB, as a client's
// socket buffer fills: one small write per frame pair made the attack's
// rate that of the machine's spare CPU (46 MiB in 20 s on a loaded CI
// box, short of the budget it must exhaust).
func Pipeline(c net.Conn, frames [][]byte, d, stall time.Duration) (written int64, blocked bool, err error) {
	var batch []byte
	for len(batch) < 64<<10 {
		for _, f := range frames {
			batch = append(batch, f...)
		}
	}
	defer c.SetWriteDeadline(time.Time{})
	for end := time.Now().Add(d); time.Now().Before(end); {
		_ = c.SetWriteDeadline(time.Now().Add(stall))
		n, err := c.Write(batch)
		written += int64(n)
		if err != nil {
			if outcomeOf(err) == Stalled {
				return written, true, nil
			}
			return written, false, err
		}
	}
	return written, false, nil
}

// LoopbackSources are n loopback source addresses 127.0.<base>.2,
// 127.0.<base>.3, ... (250 a block, then the next third octet): never
// 127.0.0.1, the good clients' own.
func LoopbackSources(base, n int) []string {
	srcs := make([]string, n)
	for j := range srcs {
		srcs[j] = fmt.Sprintf("127.0.%d.%d", base+j/250, 2+j%250)
	}
	return srcs
}

// IsClosedErr reports whether err is the peer closing or resetting the
// connection (not a timeout).
func IsClosedErr(err error) bool { return err != nil && outcomeOf(err) == Closed }

// ReadResponse reads one response frame from c within timeout into r (its
// version set to the request's): correlation id, the flexible header's tag
// buffer, body. An error that IsClosedErr means the peer closed instead.
func ReadResponse(c net.Conn, r kmsg.Response, timeout time.Duration) (correlationID int32, err error) {
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	defer c.SetReadDeadline(time.Time{})
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return 0, err
	}
	b := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, b); err != nil {
		return 0, err
	}
	if len(b) < 4 {
		return 0, fmt.Errorf("response of %d bytes", len(b))
	}
	correlationID, b = int32(binary.BigEndian.Uint32(b)), b[4:]
	if r.IsFlexible() {
		// The response header's tagged fields: none from Kafka today.
		if len(b) == 0 || b[0] != 0 {
			return correlationID, fmt.Errorf("response header with tagged fields")
		}
		b = b[1:]
	}
	return correlationID, r.ReadFrom(b)
}
