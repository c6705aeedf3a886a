package proxy

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// intercept decodes a request for its interceptor and stops reading the
// connection until the interceptor decides.
func (cc *clientConn) intercept(frame []byte, reg *registration) gnet.Action {
	p := cc.p
	key, version, corr := kafkaframe.FixedHeader(frame[4:])
	if len(frame) > p.opts.MaxInterceptedBytes {
		return cc.reject("locally handled request over max-intercepted-bytes", fmt.Sprintf("%d bytes exceed the %d-byte limit", len(frame), p.opts.MaxInterceptedBytes), key, version)
	}
	if reg.bodyLimit > 0 && len(frame)-4 > reg.bodyLimit {
		return cc.answerOversize(reg, key, version, corr, len(frame)-4)
	}
	// Decoding takes several times the frame: judged before it is made,
	// by the rule the read that brought it is judged by (budget.go),
	// rather than after (issue #42): the frame's bytes in the input
	// become its decoded hold.
	if cc.budgetRefuses(int64((interceptHoldFactor - 1) * len(frame))) {
		return cc.closeOverBudget()
	}
	own := clone(frame)
	h, err := kafkaframe.ParseRequestHeader(own[4:])
	if err != nil {
		return cc.reject("malformed request header", err.Error(), key, version)
	}
	var body kmsg.Request
	if reg.hop == nil {
		// A key with a hop is decoded off the loop, if at all (hop.go).
		body = kmsg.RequestForKey(key)
		body.SetVersion(version)
		if err := body.ReadFrom(own[4+h.BodyAt:]); err != nil {
			return cc.reject("malformed body", err.Error(), key, version)
		}
		kafkaStrings(body)
	}
	if h.ClientID != nil {
		cc.clientID = kafkaString(*h.ClientID)
	}
	s := &slot{corr: corr, key: key, version: version, local: true}
	if p.taps(key) {
		s.tapReq, s.tapAt = own, time.Now()
	}
	cc.ring.push(s)
	cc.blocked = true
	// The copy and the decoded body are held until the outcome, and count
	// against the memory budget (decoding allocates several times the size).
	cc.decoded = interceptHoldFactor * len(own)
	p.m.intercepted.Inc()
	req := &Request{Client: cc.info(), Key: key, Version: version, CorrelationID: corr, Body: body,
		frame: own[4:], bodyAt: h.BodyAt, conn: cc}
	if body == nil {
		// Only a hop's request decodes late (Decode).
		req.malformed = func(err error) { cc.rejectLater("malformed body", err, key, version) }
	}
	out := &outcome{cc: cc, s: s, raw: own, clientID: h.ClientID}
	go func() {
		defer func() {
			if r := recover(); r != nil {
				p.log.Error().Uint64("conn", cc.id).Str("api", kmsg.NameForKey(key)).Interface("panic", r).Msg("interceptor panicked; closing client connection")
				if out.used.CompareAndSwap(false, true) {
					cc.onLoop(func() { cc.closeWith("interceptor failed") })
				}
			}
		}()
		if reg.hop != nil {
			interceptUndecoded(reg, req, out)
			return
		}
		reg.i.Intercept(req, out)
	}()
	return gnet.None
}

// interceptHoldFactor is what an intercepted request costs while it is
// handled, in multiples of its size: the proxy's copy of the frame and the
// decoded body (kmsg's structs, a string per name: about 7 times the frame
// for a topology of many small subtopologies).
const interceptHoldFactor = 8

// answerOversize answers a request above its key's body limit (LimitBody)
// without decoding it; the frame is discarded by the caller.
func (cc *clientConn) answerOversize(reg *registration, key, version int16, corr int32, size int) gnet.Action {
	p := cc.p
	resp := reg.oversize(version, size)
	if resp == nil || resp.Key() != key {
		return cc.reject("request over its api's body limit", fmt.Sprintf("%d bytes exceed the %d-byte limit of %s", size, reg.bodyLimit, kmsg.NameForKey(key)), key, version)
	}
	resp.SetVersion(version)
	out := kafkaframe.AppendResponse(nil, corr, resp)
	p.m.frameRejected.WithLabelValues("request over its api's body limit, answered undecoded").Inc()
	p.log.Warn().Uint64("conn", cc.id).Str("remote", cc.remote).Str("api", kmsg.NameForKey(key)).Int16("version", version).
		Int("bytes", size).Int("limit", reg.bodyLimit).Msg("request larger than any its api can accept; answered without decoding it")
	s := &slot{corr: corr, key: key, version: version, local: true, done: true, resp: out}
	cc.buffered += len(out)
	cc.ring.push(s)
	p.m.localResponses.Inc()
	cc.flush()
	return gnet.None
}

// outcome is the Outcome of one intercepted request.
type outcome struct {
	cc       *clientConn
	s        *slot
	raw      []byte
	clientID *string
	used     atomic.Bool
}

func (o *outcome) claim(method string) bool {
	if o.used.CompareAndSwap(false, true) {
		return true
	}
	o.cc.p.log.Error().Uint64("conn", o.cc.id).Str("api", kmsg.NameForKey(o.s.key)).Str("method", method).
		Msg("interceptor completed a request twice; ignored")
	return false
}

// fail closes the client: the interceptor gave something the proxy cannot send.
func (o *outcome) fail(err error) {
	cc := o.cc
	cc.p.log.Error().Uint64("conn", cc.id).Str("api", kmsg.NameForKey(o.s.key)).Err(err).Msg("interceptor outcome unusable; closing client connection")
	cc.onLoop(func() { cc.closeWith("interceptor outcome unusable") })
}

func (o *outcome) Respond(resp kmsg.Response) {
	if !o.claim("Respond") {
		return
	}
	if resp == nil || resp.Key() != o.s.key {
		o.fail(fmt.Errorf("Respond needs a %s response", kmsg.NameForKey(o.s.key)))
		return
	}
	resp.SetVersion(o.s.version)
	cc, s := o.cc, o.s
	frame, ok := cc.buildAnswer(s, resp)
	if !ok {
		return
	}
	cc.completeAnswer(s, frame, func() {
		cc.p.m.localResponses.Inc()
		cc.blocked, cc.decoded = false, 0
		_ = cc.conn.Wake(nil)
	})
}

func (o *outcome) Forward() {
	if !o.claim("Forward") {
		return
	}
	cc, s, raw := o.cc, o.s, o.raw
	cc.onLoop(func() { cc.sendIntercepted(s, raw) })
}

func (o *outcome) ForwardRewritten(req kmsg.Request, version int16, onResponse func(kmsg.Response) kmsg.Response) {
	if !o.claim("ForwardRewritten") {
		return
	}
	if req == nil || req.Key() != o.s.key {
		o.fail(fmt.Errorf("ForwardRewritten needs a %s request", kmsg.NameForKey(o.s.key)))
		return
	}
	if version < 0 || version > req.MaxVersion() {
		o.fail(fmt.Errorf("ForwardRewritten: %s v%d unknown", kmsg.NameForKey(o.s.key), version))
		return
	}
	req.SetVersion(version)
	frame := kafkaframe.AppendRequest(nil, o.s.corr, o.clientID, req)
	cc, s := o.cc, o.s
	cc.onLoop(func() {
		s.rewritten, s.fwdVersion, s.onResponse = true, version, onResponse
		cc.sendIntercepted(s, frame)
	})
}

// sendIntercepted forwards the request of an intercepted slot, which is the
// newest slot of the ring: reading stopped when it was intercepted, so the
// upstream sees requests in the client's order.
func (cc *clientConn) sendIntercepted(s *slot, frame []byte) {
	s.local = false
	s.upstream = true
	cc.sent.push(s)
	cc.blocked, cc.decoded = false, 0
	if cc.up == nil {
		cc.closeWith("upstream connection lost")
		return
	}
	cc.p.m.upstream(s.key)
	_, _ = cc.up.Write(frame)
	_ = cc.conn.Wake(nil)
}

// Answers the proxy builds itself (a local response, an interceptor's
// rewrite of the upstream's) are bounded before they are built: a request
// naming one group a million times asks for a million descriptions, and
// Kafka would build them all (it bounds only the request). streamshift
// promises a memory budget instead (limits.max-buffered-bytes), so an
// answer past limits.max-answer-bytes, or past the connection's share of an
// exhausted budget, closes the connection, as a request over
// max-intercepted-bytes does. The answer's bytes are reserved in the budget
// from the moment it is admitted until its connection accounts for it.

// SizedResponse is a response that knows its encoded size before it is
// encoded (route's repeated answers: each distinct entry encoded once,
// repeated per mention), so the bound is checked before the answer is
// built. Any other response is checked once encoded.
type SizedResponse interface {
	kmsg.Response
	// EncodedSize is the length of AppendTo's output at the response's
	// current version.
	EncodedSize() int
}

// answerTooLarge is the frames-rejected reason of an answer over its bound.
const answerTooLarge = "answer-too-large"

// buildAnswer encodes resp (its version set) as the response frame of s,
// off the loop, once its size is admitted; it returns the frame and the
// bytes reserved for it in the budget, which the caller releases on the
// loop (completeAnswer). A refused answer closes the connection and
// returns ok false.
func (cc *clientConn) buildAnswer(s *slot, resp kmsg.Response) (frame []byte, ok bool) {
	if sr, sized := resp.(SizedResponse); sized {
		size := 8 + 1 + sr.EncodedSize() // size, correlation id, header tags
		if !cc.admitAnswer(s, size) {
			return nil, false
		}
		frame = kafkaframe.AppendResponse(make([]byte, 0, size), s.corr, resp)
		cc.p.mem.total.Add(int64(len(frame) - size)) // the reservation becomes the frame's exact size
		return frame, true
	}
	frame = kafkaframe.AppendResponse(nil, s.corr, resp)
	return frame, cc.admitAnswer(s, len(frame))
}

// admitAnswer reserves size bytes of the budget for an answer of s, or
// refuses it: over MaxAnswerBytes, or when the budget would be exhausted
// and the connection would hold more than its share (the rule a client's
// read is judged by, budget.go).
func (cc *clientConn) admitAnswer(s *slot, size int) bool {
	p := cc.p
	b := &p.mem
	limit := int64(p.opts.MaxAnswerBytes)
	over := int64(size) > limit
	if !over {
		total := b.total.Add(int64(size))
		share := b.limit / max(p.active.Load(), 1)
		if total > b.limit && cc.held.Load()+int64(size) > share {
			b.total.Add(-int64(size))
			over, limit = true, share
		}
	}
	if !over {
		return true
	}
	p.m.frameRejected.WithLabelValues(answerTooLarge).Inc()
	p.log.Warn().Uint64("conn", cc.id).Str("remote", cc.remote).Str("api", kmsg.NameForKey(s.key)).
		Int16("version", s.version).Int("answer_bytes", size).Int64("limit_bytes", limit).
		Int("max_answer_bytes", p.opts.MaxAnswerBytes).Int64("buffered_bytes", b.total.Load()).Int64("max_buffered_bytes", b.limit).
		Msg("answer over limits.max-answer-bytes or this connection's share of the memory budget; closing client connection without building it")
	cc.onLoop(func() {
		cc.closeWith("bad request: its answer is over max-answer-bytes or the connection's share of max-buffered-bytes")
	})
	return false
}

// completeAnswer stores an admitted answer on the loop, where the
// connection accounts for it, and releases its reservation whether or not
// the connection is still open.
func (cc *clientConn) completeAnswer(s *slot, frame []byte, then func()) {
	_ = cc.loop.Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
		cc.p.mem.total.Add(-int64(len(frame)))
		if !cc.closed {
			if then != nil {
				then()
			}
			cc.completeLocal(s, frame)
		}
		return nil
	}))
}
