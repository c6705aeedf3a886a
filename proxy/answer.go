package proxy

import (
	"context"

	"github.com/panjf2000/gnet/v2"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

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
