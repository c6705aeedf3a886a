package proxy

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// A request that goes to another instance is decoded once, by the instance
// that serves it (issue #43, item 3): a key's hop (RegisterHop) sees the
// request before its body is decoded, reads what routing needs from the
// bytes (the group) and sends the client's own bytes over the link
// (ServeRemote); the owner's answer comes back as bytes (RespondFrame).
// Only what the hop leaves, or a hop that must answer itself, decodes the
// body (Decode).

// Hop takes a request of its key before its body is decoded (Body is nil,
// RawBody the body as the client sent it) and says whether it took it: it
// then completes out itself, as an interceptor does (calling Decode first
// if it needs the body). When it returns false the proxy decodes the body
// and hands the request to the key's interceptor.
type Hop func(req *Request, out Outcome) bool

// RegisterHop sets the hop of a registered key: from then on, its requests
// reach hop undecoded first, off the event loops.
func (p *Proxy) RegisterHop(key int16, hop Hop) error {
	if hop == nil {
		return fmt.Errorf("hop %s: nil hop", kmsg.NameForKey(key))
	}
	return p.reg.update(key, "hop", func(reg *registration) { reg.hop = hop })
}

// NewUndecodedRequest is a request as its client sent it (frame: header
// and body, no size prefix) that has not been decoded yet, as a hop sees
// it; malformed is called when Decode finds the body malformed (the
// proxy closes a client connection for it, as Kafka does). Tests build one
// on a connection of their own (package proxytest).
func NewUndecodedRequest(conn ClientConn, client ClientInfo, frame []byte, malformed func(error)) (*Request, error) {
	h, err := kafkaframe.ParseRequestHeader(frame)
	if err != nil {
		return nil, err
	}
	return &Request{Client: client, Key: h.Key, Version: h.Version, CorrelationID: h.Corr,
		frame: frame, bodyAt: h.BodyAt, malformed: malformed, conn: conn}, nil
}

// RawBody is the request's body as the client sent it (after the request
// header); nil for a request that did not come as bytes (a test's, or a
// part of a split request).
func (r *Request) RawBody() []byte {
	if r.frame == nil {
		return nil
	}
	return r.frame[r.bodyAt:]
}

// Decode decodes the body of a request a hop sees (its strings as Kafka
// reads them); it does nothing when Body is set. A body that does not
// decode is the client's error: the connection is closed, as the proxy
// closes it for a malformed body it decodes itself, and the caller must
// leave the request (nothing answers it).
func (r *Request) Decode() error {
	if r.Body != nil {
		return nil
	}
	body := kmsg.RequestForKey(r.Key)
	if body == nil {
		return r.failDecode(fmt.Errorf("api key %d unknown", r.Key))
	}
	body.SetVersion(r.Version)
	if err := body.ReadFrom(r.RawBody()); err != nil {
		return r.failDecode(err)
	}
	kafkaStrings(body)
	r.Body = body
	return nil
}

func (r *Request) failDecode(err error) error {
	err = fmt.Errorf("malformed %s v%d body: %w", kmsg.NameForKey(r.Key), r.Version, err)
	if r.malformed != nil {
		r.malformed(err)
	}
	return err
}

// interceptUndecoded runs a request of a key with a hop: the hop first,
// then, if it left it, the key's interceptor on the decoded request.
func interceptUndecoded(reg *registration, req *Request, out Outcome) {
	if reg.hop(req, out) {
		return
	}
	if req.Decode() != nil {
		return
	}
	reg.i.Intercept(req, out)
}

// rejectLater closes the connection for a bad request found off the loop
// (a body a hop's request decodes late), with reject's metric and line.
func (cc *clientConn) rejectLater(reason string, err error, key, version int16) {
	cc.onLoop(func() {
		cc.reject(reason, err.Error(), key, version)
		cc.closeWith(cc.reason)
	})
}
