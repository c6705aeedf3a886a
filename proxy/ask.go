package proxy

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Asks are requests of the proxy's own sent on a client's own upstream
// connection, so the broker answers them for the client's principal: the
// routes ask the broker whether that principal may do what a request the
// proxy serves itself needs (route/authorize.go). The client never sees
// them. An ask takes a slot of the connection's sent queue only, never of
// the ring: its response is matched in upstream order like any other and
// handed to the asker instead of the client.

// maxAsksInFlight bounds the asks of one client connection awaiting their
// answer: an interceptor asks a handful at most per request, and the
// connection reads no further request meanwhile.
const maxAsksInFlight = 8

// maxAskResponseBytes bounds an ask's response: probes name a few topics
// or groups, so a larger answer is not one of theirs.
const maxAskResponseBytes = 16 << 20

// ErrAskClosed is returned by Ask when the client's connection (or its
// upstream connection) closed before the answer came.
var ErrAskClosed = errors.New("client connection closed before the broker answered")

// errTooManyAsks is returned when a connection has maxAsksInFlight asks
// outstanding already.
var errTooManyAsks = fmt.Errorf("more than %d requests of the proxy's own in flight on this connection", maxAsksInFlight)

// askState is a connection's asks, touched on its loop only.
type askState struct {
	inFlight int
	// corr is the last correlation id given to an ask: negative, counting
	// down, apart from the client's (which Kafka's clients count up from
	// 0); responses are matched by order anyway, the id is only checked.
	corr int32
}

// askCall is one ask awaiting its answer.
type askCall struct {
	key, version int16
	// answer gets the response frame (owned) or an error, once; buffered.
	answer chan askAnswer
}

type askAnswer struct {
	frame []byte
	err   error
}

// Ask sends req at version on the client's own upstream connection, after
// every request of that connection already sent, with a correlation id of
// the proxy's, and returns the broker's decoded response. It may be called
// from the interceptor's goroutine while the request is being decided (and
// from any goroutine as long as the connection lives); it returns
// ErrAskClosed if the connection closes first and ctx's error if ctx ends
// first (the response, when it comes, is then dropped).
func (r *Request) Ask(ctx context.Context, req kmsg.Request, version int16) (kmsg.Response, error) {
	return r.Send(req, version).Wait(ctx)
}

// Send is Ask without the wait: the request is queued for the connection's
// loop before Send returns, so it goes upstream before anything the
// interceptor does after (its outcome included); Wait gets the answer.
func (r *Request) Send(req kmsg.Request, version int16) *Pending {
	if r.cc == nil {
		return &Pending{err: errors.New("ask: request of no client connection")}
	}
	return r.cc.send(req, version)
}

// Pending is an ask sent and not yet answered.
type Pending struct {
	cc   *clientConn
	call *askCall
	name string
	err  error
}

func (cc *clientConn) send(req kmsg.Request, version int16) *Pending {
	name := kmsg.NameForKey(req.Key())
	if version < 0 || version > req.MaxVersion() {
		return &Pending{err: fmt.Errorf("ask %s v%d: unknown version", name, version)}
	}
	req.SetVersion(version)
	call := &askCall{key: req.Key(), version: version, answer: make(chan askAnswer, 1)}
	// Encoded here, off the loop; the loop only stamps the correlation id.
	clientID := "streamshift"
	frame := appendRequestFrame(nil, 0, &clientID, req)
	cc.onLoop(func() { cc.sendAsk(call, frame) })
	return &Pending{cc: cc, call: call, name: name}
}

// Wait returns the broker's decoded answer, ErrAskClosed if the connection
// closed first, or ctx's error.
func (p *Pending) Wait(ctx context.Context) (kmsg.Response, error) {
	if p.err != nil {
		return nil, p.err
	}
	select {
	case a := <-p.call.answer:
		if a.err != nil {
			return nil, fmt.Errorf("ask %s: %w", p.name, a.err)
		}
		resp, err := decodeResponse(p.call.key, p.call.version, a.frame[4:])
		if err != nil {
			return nil, fmt.Errorf("ask %s: %w", p.name, err)
		}
		return resp, nil
	case <-p.cc.done:
		return nil, fmt.Errorf("ask %s: %w", p.name, ErrAskClosed)
	case <-ctx.Done():
		return nil, fmt.Errorf("ask %s: %w", p.name, ctx.Err())
	}
}

// sendAsk runs on the loop: it writes the ask upstream behind what the
// connection sent already and queues its slot, which only the sent queue
// holds.
func (cc *clientConn) sendAsk(call *askCall, frame []byte) {
	if cc.up == nil || !cc.upReady {
		call.answer <- askAnswer{err: ErrAskClosed}
		return
	}
	if cc.asking.inFlight >= maxAsksInFlight {
		call.answer <- askAnswer{err: errTooManyAsks}
		return
	}
	cc.asking.inFlight++
	cc.asking.corr--
	if cc.asking.corr >= 0 {
		cc.asking.corr = -1
	}
	s := &slot{corr: cc.asking.corr, key: call.key, version: call.version, upstream: true, ask: call}
	cc.sent.push(s)
	binary.BigEndian.PutUint32(frame[8:], uint32(s.corr)) // after size, key and version
	_, _ = cc.up.Write(frame)
}

// answerAsk runs on the loop for the upstream response of an ask slot.
func (cc *clientConn) answerAsk(s *slot, frame []byte) {
	cc.asking.inFlight--
	if len(frame) > maxAskResponseBytes {
		s.ask.answer <- askAnswer{err: fmt.Errorf("%d-byte response exceeds %d bytes", len(frame), maxAskResponseBytes)}
		return
	}
	s.ask.answer <- askAnswer{frame: clone(frame)}
}
