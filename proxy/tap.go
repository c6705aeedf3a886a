package proxy

import "time"

// Tap sees the request/response exchanges of the keys it wants, for
// capture and inspection tools. Wants is asked on a gnet loop for every
// request: it must be as cheap as a bit test. Exchange is called on a gnet
// loop with frames copied for the tap: it must return at once (hand the
// exchange to a channel or buffer) and may keep the exchange. With no Tap
// set, or a key not wanted, nothing is copied and large frames still pass
// through while they arrive.
type Tap interface {
	Wants(key int16) bool
	Exchange(e *Exchange)
}

// taps says whether exchanges of key go to the tap.
func (p *Proxy) taps(key int16) bool {
	return p.opts.Tap != nil && p.opts.Tap.Wants(key)
}

// Exchange is one request and its response as the client saw them.
type Exchange struct {
	Client        ClientInfo
	Key, Version  int16
	CorrelationID int32
	// Request is the request frame as the client sent it (size prefix
	// included).
	Request []byte
	// Response is the response frame as written to the client, after any
	// rewriting; nil for acks=0 Produce, which has none.
	Response []byte
	// Local is set when the proxy answered without the upstream.
	Local bool
	// Received is when the request was read; At is when the response
	// was written (the request time for acks=0).
	Received, At time.Time
	// Opened is when the client connection opened.
	Opened time.Time
}

// ConnTap is a Tap also told when a client connection closes (after its
// last exchange), with the reason the proxy logs: the capture tells a
// member that stopped from one that is quiet by it. ConnClosed runs on a
// gnet loop and must return at once.
type ConnTap interface {
	ConnClosed(c ClientInfo, at time.Time, reason string)
}

// tapClosed tells the tap, if it wants to know, that cc closed.
func (p *Proxy) tapClosed(cc *clientConn, reason string) {
	if t, ok := p.opts.Tap.(ConnTap); ok {
		t.ConnClosed(cc.info(), time.Now(), reason)
	}
}
