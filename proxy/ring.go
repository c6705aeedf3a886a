package proxy

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// slot is one request of a client connection that expects a response. Slots
// sit in the connection's ring in request order; a response is written to the
// client only from the head, because Kafka clients match responses by order
// (the correlation id is only checked).
type slot struct {
	corr    int32
	key     int16
	version int16

	// upstream: the request went upstream and the slot waits for the response.
	upstream bool
	// done: resp holds the frame for the client.
	done bool
	resp []byte

	// rewrite: the response carries addresses (or is ApiVersions) and is
	// decoded before it goes to the client.
	rewrite bool
	// fwdVersion and onResponse are set by Outcome.ForwardRewritten.
	fwdVersion int16
	rewritten  bool
	onResponse func(kmsg.Response) kmsg.Response

	// saslAuth: a SaslAuthenticate, whose answer says whether the
	// connection's principal is known (sasl_principal.go).
	saslAuth bool

	// ask: a request of the proxy's own (ask.go), in the sent queue only.
	ask *askCall

	// local: answered by the proxy (too-new ApiVersions or an interceptor).
	local bool
	// tapReq is a copy of the request frame, kept only when a Tap is set.
	tapReq []byte
	tapAt  time.Time
}

// slotQueue is a FIFO of slots. The connection keeps two: the ring (every slot,
// client order) and the sent queue (slots awaiting an upstream response, in the
// order their requests were written upstream).
type slotQueue struct {
	s    []*slot
	head int
	// fetches counts the queued Fetch and ShareFetch slots, whose
	// responses can be tens of MiB (see maxInflightFetches).
	fetches int
}

func (q *slotQueue) len() int { return len(q.s) - q.head }

func (q *slotQueue) push(s *slot) {
	q.s = append(q.s, s)
	if isFetch(s.key) {
		q.fetches++
	}
}

func isFetch(key int16) bool {
	return key == int16(kmsg.Fetch) || key == int16(kmsg.ShareFetch)
}

func (q *slotQueue) peek() *slot {
	if q.head == len(q.s) {
		return nil
	}
	return q.s[q.head]
}

func (q *slotQueue) pop() *slot {
	s := q.s[q.head]
	if isFetch(s.key) {
		q.fetches--
	}
	q.s[q.head] = nil
	q.head++
	if q.head == len(q.s) {
		// Empty: reuse the backing array from the start.
		q.s = q.s[:0]
		q.head = 0
	} else if q.head >= 64 && q.head*2 >= len(q.s) {
		n := copy(q.s, q.s[q.head:])
		clear(q.s[n:])
		q.s = q.s[:n]
		q.head = 0
	}
	return s
}

// reset drops every slot (connection closed).
func (q *slotQueue) reset() {
	clear(q.s)
	q.s = nil
	q.head = 0
	q.fetches = 0
}
