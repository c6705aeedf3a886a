package proxy

import "time"

// Tap sees every request/response exchange of every client connection, for
// capture and inspection tools. Exchange is called on a gnet loop with frames
// copied for the tap: it must return at once (hand the exchange to a channel
// or buffer) and may keep the exchange. With no Tap set nothing is copied.
type Tap interface {
	Exchange(e *Exchange)
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
	// At is when the response was written (the request time for acks=0).
	At time.Time
}
