package proxy

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// tlsConn is a gnet.Conn that speaks TLS on its socket. Once its handshake is
// done it runs on the connection's loop like a plaintext one: pump decrypts
// what gnet read into in, and Peek, Discard, InboundBuffered and Write work on
// the plaintext, so the request and response paths of conn.go do not know
// whether a side is encrypted. Everything else (Wake, Close, addresses,
// OutboundBuffered of the ciphertext) is the socket's.
type tlsConn struct {
	gnet.Conn // the socket; nil on an upstream connection until enrolled
	tc        *tls.Conn
	tr        *tlsTransport
	in        []byte // decrypted bytes, in[off:] not consumed yet
	off       int
	handshook bool // on the loop: reads and writes may use tc
}

// tlsReadChunk is the free room pump keeps in in before a decrypting read: a
// whole TLS record (16 KiB of plaintext) fits.
const tlsReadChunk = 32 << 10

func (c *tlsConn) InboundBuffered() int { return len(c.in) - c.off }

// Peek is gnet's Peek on the plaintext: n <= 0 is everything, more than is
// buffered is io.ErrShortBuffer. The slice is valid until Discard or the
// next pump.
func (c *tlsConn) Peek(n int) ([]byte, error) {
	b := c.in[c.off:]
	if n <= 0 {
		return b, nil
	}
	if n > len(b) {
		return nil, io.ErrShortBuffer
	}
	return b[:n:n], nil
}

func (c *tlsConn) Discard(n int) (int, error) {
	left := len(c.in) - c.off
	if n <= 0 || n > left {
		n = left
	}
	c.off += n
	c.releaseDrained()
	return n, nil
}

// releaseDrained lets go of the plaintext buffer once everything in it was
// consumed, unless it is a producer's large one.
func (c *tlsConn) releaseDrained() {
	if c.off != len(c.in) || cap(c.in) == 0 {
		return
	}
	switch {
	case cap(c.in) <= tlsPooledBuffer:
		// Most connections carry small requests and then idle: their
		// buffer goes back to the pool in between.
		b := c.in[:0]
		tlsBuffers.Put(&b)
		c.in, c.off = nil, 0
	case cap(c.in) > tlsKeepBuffer:
		// An unusually large frame passed: its buffer goes rather than
		// staying with a connection that may idle for hours.
		c.in, c.off = nil, 0
	}
}

// tlsBuffers are the plaintext buffers of TLS connections between uses,
// tlsPooledBuffer bytes each: an idle TLS connection holds none.
var tlsBuffers = sync.Pool{New: func() any {
	b := make([]byte, 0, tlsPooledBuffer)
	return &b
}}

const tlsPooledBuffer = 2 * tlsReadChunk

// tlsKeepBuffer is the largest plaintext buffer a connection keeps once
// everything in it was consumed. Producers send requests of a few MiB over
// and over (batch.size times partitions per broker): dropping their buffer
// after each one (tried at 256 KiB) cost 2.9 instead of 1.9 CPU seconds
// per GiB produced, in allocations, zeroing and growth copies.
const tlsKeepBuffer = 8 << 20

// Write encrypts b and hands the records to the socket in chunks of
// tlsWriteChunk: one gnet write per chunk rather than one per 16 KiB
// record, since gnet queues every write separately when the socket is full
// (the unstaged variant was one of the two changes that together cost 3.2
// instead of 1.9 CPU seconds per GiB produced: BENCHMARKS.md, TLS route).
func (c *tlsConn) Write(b []byte) (int, error) {
	if c.tr.out == nil {
		c.tr.out = (*tlsOutBuffers.Get().(*[]byte))[:0]
	}
	defer c.releaseOut()
	written := 0
	for len(b) > 0 {
		n := min(len(b), tlsWriteChunk)
		m, err := c.tc.Write(b[:n])
		written += m
		c.flushOut()
		if err != nil {
			return written, err
		}
		b = b[n:]
	}
	return written, nil
}

// tlsWriteChunk bounds the plaintext encrypted per socket write, so the
// ciphertext staged in tr.out stays small whatever the response size.
const tlsWriteChunk = 256 << 10

func (c *tlsConn) flushOut() {
	if len(c.tr.out) > 0 {
		_, _ = c.Conn.Write(c.tr.out) // gnet copies what it cannot write now
		c.tr.out = c.tr.out[:0]
	}
}

// releaseOut gives the staging buffer back once written out, so an idle
// connection holds none.
func (c *tlsConn) releaseOut() {
	if b := c.tr.out[:0]; cap(b) >= tlsWriteChunk {
		tlsOutBuffers.Put(&b)
	}
	c.tr.out = nil
}

// tlsOutBuffers are staging buffers for a tlsWriteChunk of sealed records
// (record headers and tags add about 1/700).
var tlsOutBuffers = sync.Pool{New: func() any {
	b := make([]byte, 0, tlsWriteChunk+tlsWriteChunk/8)
	return &b
}}

// pump decrypts everything the socket delivered. A partial record stays in
// tc until the rest arrives. Records tls writes in answer (a KeyUpdate, an
// alert) go out at once.
func (c *tlsConn) pump() error {
	if cap(c.in) == 0 {
		c.in, c.off = (*tlsBuffers.Get().(*[]byte))[:0], 0
	}
	for {
		if c.off == len(c.in) {
			c.in, c.off = c.in[:0], 0
		} else if c.off > 0 && cap(c.in)-len(c.in) < tlsReadChunk {
			n := copy(c.in, c.in[c.off:])
			c.in, c.off = c.in[:n], 0
		}
		if cap(c.in)-len(c.in) < tlsReadChunk {
			grown := make([]byte, len(c.in), 2*cap(c.in)+tlsReadChunk)
			copy(grown, c.in)
			c.in = grown
		}
		n, err := c.tc.Read(c.in[len(c.in):cap(c.in)])
		c.in = c.in[:len(c.in)+n]
		if err != nil {
			c.flushOut()
			c.tr.out = nil     // a small alert or KeyUpdate
			c.releaseDrained() // nothing arrived (a wake)
			if errors.Is(err, errTLSWouldBlock) {
				return nil
			}
			return err
		}
	}
}

// errTLSWouldBlock is what the transport's Read answers on the loop when
// gnet holds no more ciphertext. crypto/tls keeps its state after a
// temporary net.Error (the bytes of a partial record stay buffered), so the
// next pump goes on where this one stopped.
var errTLSWouldBlock = &wouldBlockError{}

type wouldBlockError struct{}

func (*wouldBlockError) Error() string   { return "no more TLS bytes buffered" }
func (*wouldBlockError) Timeout() bool   { return true }
func (*wouldBlockError) Temporary() bool { return true }

// tlsTransport is the net.Conn under a tls.Conn. During the handshake, which
// runs on a goroutine of its own because crypto/tls cannot resume a
// handshake that ran out of bytes, it blocks: a client connection reads the
// bytes its loop hands over (feed) and writes through AsyncWrite; an
// upstream connection uses its dialled socket before gnet enrolls it. After
// the handshake (onLoop) it never blocks: Read drains what is left of the
// handshake bytes and then gnet's inbound buffer, and Write stages the
// sealed records in out for tlsConn to flush.
type tlsTransport struct {
	raw  gnet.Conn // a client connection's socket; an upstream's once enrolled
	nc   net.Conn  // an upstream's dialled socket, during its handshake
	out  []byte    // sealed records not handed to gnet yet (on the loop)
	loop bool      // the handshake is over; only the loop touches the transport

	mu      sync.Mutex
	cond    sync.Cond
	hs      []byte // handshake bytes from the client, not read by tls yet
	starved bool   // feed left bytes in gnet's buffer
	closed  bool
}

func newTLSTransport(raw gnet.Conn, nc net.Conn) *tlsTransport {
	t := &tlsTransport{raw: raw, nc: nc}
	t.cond.L = &t.mu
	return t
}

// feed hands the handshake goroutine what gnet read from a handshaking
// client connection, at most maxHandshakeBytes unread at a time. The rest
// stays in gnet's buffer: it is the client's first requests, sent right
// behind its Finished, read on the loop once the handshake is over, or, if
// the handshake itself wants more, fed when the goroutine has read what it
// has (Read wakes the connection).
func (t *tlsTransport) feed(raw gnet.Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := min(raw.InboundBuffered(), maxHandshakeBytes-len(t.hs))
	if n > 0 {
		b, _ := raw.Next(n)
		t.hs = append(t.hs, b...)
		t.cond.Signal()
	}
	t.starved = raw.InboundBuffered() > 0
}

// maxHandshakeBytes caps the handshake bytes of one connection held for
// its goroutine: a ClientHello and a client certificate chain are a few
// KiB.
const maxHandshakeBytes = 64 << 10

func (t *tlsTransport) Read(p []byte) (int, error) {
	if t.loop {
		if len(t.hs) > 0 {
			n := copy(p, t.hs)
			t.hs = t.hs[n:]
			return n, nil
		}
		if t.raw.InboundBuffered() == 0 {
			return 0, errTLSWouldBlock
		}
		return t.raw.Read(p)
	}
	if t.nc != nil {
		return t.nc.Read(p)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.hs) == 0 && !t.closed {
		t.cond.Wait()
	}
	if len(t.hs) == 0 {
		return 0, net.ErrClosed
	}
	n := copy(p, t.hs)
	t.hs = t.hs[n:]
	if len(t.hs) == 0 {
		t.hs = nil // the backing array of a large flight goes
		if t.starved {
			t.starved = false
			_ = t.raw.Wake(nil) // the loop feeds the rest
		}
	}
	return n, nil
}

func (t *tlsTransport) Write(p []byte) (int, error) {
	switch {
	case t.loop:
		t.out = append(t.out, p...)
		return len(p), nil
	case t.nc != nil:
		return t.nc.Write(p)
	}
	// A handshake flight from the goroutine: AsyncWrite runs on the loop
	// ahead of the low-priority task that ends the handshake, so the
	// order of the records holds.
	if err := t.raw.AsyncWrite(clone(p), nil); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close unblocks a handshake read and closes the socket; tls calls it when
// the handshake's context ends.
func (t *tlsTransport) Close() error {
	t.mu.Lock()
	t.closed = true
	t.cond.Broadcast()
	t.mu.Unlock()
	if t.nc != nil && !t.loop {
		return t.nc.Close()
	}
	if t.raw != nil {
		return t.raw.Close()
	}
	return nil
}

func (t *tlsTransport) LocalAddr() net.Addr {
	if t.raw != nil {
		return t.raw.LocalAddr()
	}
	return t.nc.LocalAddr()
}

func (t *tlsTransport) RemoteAddr() net.Addr {
	if t.raw != nil {
		return t.raw.RemoteAddr()
	}
	return t.nc.RemoteAddr()
}

// Deadlines are not used: the handshake is bounded by its context, and on
// the loop nothing blocks.
func (t *tlsTransport) SetDeadline(time.Time) error      { return nil }
func (t *tlsTransport) SetReadDeadline(time.Time) error  { return nil }
func (t *tlsTransport) SetWriteDeadline(time.Time) error { return nil }
