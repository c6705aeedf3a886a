package proxy

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
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
	// held are asks that came while a client request was going upstream
	// as it arrived (reqStreamLeft): they follow its last byte; or while
	// a SASL exchange runs upstream (sasl): they follow its end.
	held []heldAsk
	// sasl: the client's SaslHandshake went upstream and the exchange has
	// not ended. Kafka's broker takes nothing but SaslAuthenticate from
	// then until it answers the last one (SaslServerAuthenticator: an
	// authentication or a KIP-368 re-authentication): any other request
	// fails it ("Unexpected Kafka request of type X during SASL
	// authentication") and closes the connection.
	sasl bool
	// saslSince is when the exchange went upstream (the debug log).
	saslSince time.Time
	// corr is the last correlation id given to an ask: negative, counting
	// down, apart from the client's (which Kafka's clients count up from
	// 0); responses are matched by order anyway, the id is only checked.
	corr int32
}

// askCall is one ask awaiting its answer.
type askCall struct {
	key, version int16
	// answer gets the response body (owned) or an error, once; buffered.
	answer chan AskAnswer
	// raw: the ask is a request another instance sent (askRaw), answered
	// with the whole response, header included, under corr.
	raw  bool
	corr int32
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

// Send is Ask without the wait: the request is queued on the connection
// before Send returns, so it goes upstream before anything the interceptor
// does after (its outcome included); Wait gets the answer, also after the
// request was answered (a background refresh): the wait ends with the
// client connection (ConnClosed), not with the request, which for a client
// of another instance ends when the owner answers it.
func (r *Request) Send(req kmsg.Request, version int16) *Pending {
	name := kmsg.NameForKey(req.Key())
	if r.conn == nil {
		return &Pending{name: name, err: errors.New("request of no client connection")}
	}
	if version < 0 || version > req.MaxVersion() {
		return &Pending{name: name, err: fmt.Errorf("v%d: unknown version", version)}
	}
	req.SetVersion(version)
	return &Pending{name: name, key: req.Key(), version: version, answer: r.conn.Ask(req), done: r.ConnClosed()}
}

// Pending is an ask sent and not yet answered.
type Pending struct {
	name         string
	key, version int16
	answer       <-chan AskAnswer
	done         <-chan struct{}
	err          error
}

// Ask encodes req here, off the loop, and queues it on the loop, which only
// stamps the correlation id (ClientConn).
func (cc *clientConn) Ask(req kmsg.Request) <-chan AskAnswer {
	call := &askCall{key: req.Key(), version: req.GetVersion(), answer: make(chan AskAnswer, 1)}
	clientID := "streamshift"
	frame := kafkaframe.AppendRequest(nil, 0, &clientID, req)
	cc.onLoop(func() { cc.sendAsk(call, frame) })
	return call.answer
}

// Wait returns the broker's decoded answer, ErrAskClosed if the connection
// closed first, or ctx's error.
func (p *Pending) Wait(ctx context.Context) (kmsg.Response, error) {
	if p.err != nil {
		return nil, fmt.Errorf("ask %s: %w", p.name, p.err)
	}
	select {
	case a := <-p.answer:
		if a.Err != nil {
			return nil, fmt.Errorf("ask %s: %w", p.name, a.Err)
		}
		resp := kmsg.ResponseForKey(p.key)
		resp.SetVersion(p.version)
		if err := resp.ReadFrom(a.Body); err != nil {
			return nil, fmt.Errorf("ask %s: decode v%d response: %w", p.name, p.version, err)
		}
		return resp, nil
	case <-p.done:
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
		call.answer <- AskAnswer{Err: ErrAskClosed}
		return
	}
	if cc.asking.inFlight >= maxAsksInFlight {
		call.answer <- AskAnswer{Err: errTooManyAsks}
		return
	}
	cc.asking.inFlight++
	cc.asking.corr--
	if cc.asking.corr >= 0 {
		cc.asking.corr = -1
	}
	s := &slot{corr: cc.asking.corr, key: call.key, version: call.version, upstream: true, ask: call}
	binary.BigEndian.PutUint32(frame[8:], uint32(s.corr)) // after size, key and version
	if cc.reqStreamLeft > 0 || cc.asking.sasl {
		// A frame written now would land inside the client's request,
		// part of which is upstream already: the broker would read
		// both as garbage and answer neither. Or inside a SASL
		// exchange, which the broker would fail.
		cc.asking.held = append(cc.asking.held, heldAsk{s, frame})
		return
	}
	cc.sent.push(s)
	cc.p.m.upstream(s.key)
	_, _ = cc.up.Write(frame)
}

// heldAsk is an ask waiting for the end of a client request passed
// through while it arrives.
type heldAsk struct {
	s     *slot
	frame []byte
}

// sendHeldAsks writes the asks held by sendAsk once the request they
// waited for went upstream whole, or the SASL exchange ended; they are
// answered after it.
func (cc *clientConn) sendHeldAsks() {
	if cc.reqStreamLeft > 0 || cc.asking.sasl {
		return
	}
	for _, a := range cc.asking.held {
		cc.sent.push(a.s)
		cc.p.m.upstream(a.s.key)
		_, _ = cc.up.Write(a.frame)
	}
	cc.asking.held = nil
}

// saslExchangeStarts holds the asks from a SaslHandshake going upstream on.
// The debug lines of an exchange's start and end tell, when a client's
// (re-)authentication through the proxy never finishes, which side held
// it.
func (cc *clientConn) saslExchangeStarts() {
	cc.asking.sasl, cc.asking.saslSince = true, time.Now()
	cc.p.log.Debug().Uint64("conn", cc.id).Str("mechanism", cc.sasl.mechanism).Int("in_flight", cc.sent.len()).
		Int("asks_in_flight", cc.asking.inFlight).Msg("SASL exchange forwarded; asks wait for its end")
}

// saslExchangeEnds lets the held asks go: the broker answered the last
// SaslAuthenticate of a mechanism whose rounds streamshift knows, or
// answered one with an error, or the client sent a request other than
// SASL's, which it does only once authenticated (Kafka's clients send
// nothing else during a re-authentication either).
func (cc *clientConn) saslExchangeEnds(by string) {
	if !cc.asking.sasl {
		return
	}
	cc.asking.sasl = false
	cc.p.log.Debug().Uint64("conn", cc.id).Str("mechanism", cc.sasl.mechanism).Str("by", by).
		Dur("took", time.Since(cc.asking.saslSince)).Int("held_asks", len(cc.asking.held)).Msg("SASL exchange ended")
	if len(cc.asking.held) > 0 {
		cc.sendHeldAsks()
	}
}

// answerAsk runs on the loop for the upstream response of an ask slot: it
// hands over the body, past the response header, to be decoded off the
// loop (Pending.Wait).
func (cc *clientConn) answerAsk(s *slot, frame []byte) {
	cc.asking.inFlight--
	if len(frame) > maxAskResponseBytes {
		s.ask.answer <- AskAnswer{Err: fmt.Errorf("%d-byte response exceeds %d bytes", len(frame), maxAskResponseBytes)}
		return
	}
	if s.ask.raw {
		out := clone(frame[4:])
		binary.BigEndian.PutUint32(out, uint32(s.ask.corr))
		s.ask.answer <- AskAnswer{Body: out}
		return
	}
	flexible, _ := kafkaframe.RequestFlexible(s.key, s.version)
	at, err := kafkaframe.ResponseBodyAt(frame[4:], s.key, flexible)
	if err != nil {
		s.ask.answer <- AskAnswer{Err: err}
		return
	}
	s.ask.answer <- AskAnswer{Body: clone(frame[4+at:])}
}
