package proxy

import (
	"io"
)

// heldInput keeps the request bytes a client connection has received and the
// proxy has not consumed yet, outside gnet. gnet appends whatever OnTraffic
// leaves to a ring buffer that grows by taking a larger power-of-two buffer
// from its sync.Pools and putting the outgrown one back, where it stays until
// two garbage collections pass: a connection that made gnet hold 108 MiB cost
// about 410 MiB of heap (TestConnectionMemoryBound measures it). Here the
// leftover of each read is copied once into a chunk of its exact size, so the
// memory a connection holds is the bytes it holds. gnet copied those bytes
// into its ring anyway; whole frames that arrive in one read are still
// consumed straight from gnet's read buffer.
type heldInput struct {
	chunks [][]byte // in arrival order; every byte here precedes gnet's
	n      int      // bytes in chunks
}

// inBuffered is every unconsumed request byte of the connection.
func (cc *clientConn) inBuffered() int { return cc.in.n + cc.conn.InboundBuffered() }

// inPeek returns the next k unconsumed bytes without consuming them, valid
// until inDiscard; io.ErrShortBuffer if fewer are there.
func (cc *clientConn) inPeek(k int) ([]byte, error) {
	h := &cc.in
	if h.n == 0 {
		return cc.conn.Peek(k)
	}
	if len(h.chunks[0]) >= k {
		return h.chunks[0][:k], nil
	}
	more := k - h.n
	if more > 0 && more > cc.conn.InboundBuffered() {
		return nil, io.ErrShortBuffer
	}
	// Gather the k bytes into one chunk, once: a frame is peeked whole only
	// when all of it arrived.
	merged := make([]byte, 0, k)
	var rest [][]byte
	for i, c := range h.chunks {
		need := k - len(merged)
		if len(c) > need {
			merged = append(merged, c[:need]...)
			rest = append(rest, c[need:])
			rest = append(rest, h.chunks[i+1:]...)
			break
		}
		merged = append(merged, c...)
	}
	if more > 0 {
		b, err := cc.conn.Peek(more)
		if err != nil {
			return nil, err
		}
		merged = append(merged, b...)
		_, _ = cc.conn.Discard(more)
		h.n += more
	}
	h.chunks = append([][]byte{merged}, rest...)
	return merged, nil
}

// inPeekSome returns the first contiguous run of unconsumed bytes, at most
// max, without copying: what a request passed through in pieces needs.
func (cc *clientConn) inPeekSome(max int) []byte {
	if cc.in.n == 0 {
		n := min(max, cc.conn.InboundBuffered())
		if n == 0 {
			return nil
		}
		b, _ := cc.conn.Peek(n)
		return b
	}
	c := cc.in.chunks[0]
	return c[:min(max, len(c))]
}

// inDiscard consumes k bytes: the held chunks first, then gnet's.
func (cc *clientConn) inDiscard(k int) {
	h := &cc.in
	for k > 0 && len(h.chunks) > 0 {
		c := h.chunks[0]
		if len(c) > k {
			h.chunks[0] = c[k:]
			h.n -= k
			return
		}
		k -= len(c)
		h.n -= len(c)
		h.chunks[0] = nil
		h.chunks = h.chunks[1:]
	}
	if len(h.chunks) == 0 {
		h.chunks = nil
	}
	if k > 0 {
		_, _ = cc.conn.Discard(k)
	}
}

// keepInput moves what gnet still holds of the client's bytes into the held
// chunks. It runs when OnTraffic returns, so gnet's ring never fills.
func (cc *clientConn) keepInput() {
	n := cc.conn.InboundBuffered()
	if n == 0 {
		return
	}
	b, err := cc.conn.Peek(n)
	if err != nil {
		return
	}
	cc.in.chunks = append(cc.in.chunks, clone(b))
	cc.in.n += n
	_, _ = cc.conn.Discard(n)
}
