package route

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

// A handler keeps its client muted until it completes the request's
// outcome (proxy.Interceptor): a handler that never does, waiting on
// something that never answers, would leave the client silent until its
// own request timeout, and a Java client then closes the connection and
// starts over. So every row has a bound (Options.MuteBound, or its key's
// own: a held join's rebalance timeout, keys.go), and past it the client
// gets its key's refusal with COORDINATOR_NOT_AVAILABLE, which every
// client retries after looking the coordinator up again. The handler's
// late outcome is dropped. (Kroxylicious closes a connection whose filter
// has not completed within 20 s; a per-key bound lets a held join wait
// the time Kafka would hold it.)

// defaultMuteBound is Options.MuteBound's default: below the clients' 30 s
// request.timeout.ms, so they get an answer rather than time out.
const defaultMuteBound = 25 * time.Second

// muteBound is how long rt's handler may keep req's client muted.
func (rs *Routes) muteBound(rt route, req kmsg.Request) time.Duration {
	d := rs.o.MuteBound
	if c := rs.o.Cluster; c != nil {
		// A hopped request is answered at the forward timeout.
		d = max(d, c.ForwardTimeout()+muteSlack)
	}
	if rt.mute != nil {
		d = rt.mute(req, d)
	}
	return d
}

// bounded is rt's handler within its bound: a request its handler has not
// completed by then is answered with the key's refusal.
func (rs *Routes) bounded(rt route) proxy.InterceptorFunc {
	serve, refuse := rt.serve, rt.refuse
	if refuse == nil {
		return serve // a key without a refusal: keys_test.go refuses the row
	}
	return func(req *proxy.Request, out proxy.Outcome) {
		d := rs.muteBound(rt, req.Body)
		b := &boundedOutcome{out: out, req: req, refuse: refuse}
		t := time.AfterFunc(d, func() {
			if !b.done.CompareAndSwap(false, true) {
				return
			}
			rs.o.Log.Warn().Uint64("conn", req.Client.ConnID).Str("api", kmsg.NameForKey(req.Key)).Dur("bound", d).
				Msg("request not answered within its bound; answering the client COORDINATOR_NOT_AVAILABLE")
			out.Respond(refuse(req.Body, &clusterError{kerr.CoordinatorNotAvailable,
				fmt.Sprintf("streamshift did not answer this %s within %v; retry", kmsg.NameForKey(req.Key), d)}))
		})
		b.stop = t.Stop
		serve(req, b)
	}
}

// boundedOutcome is an outcome whose bound may pass first: whichever of
// the handler and the bound completes it first wins, and the other is
// dropped.
type boundedOutcome struct {
	out    proxy.Outcome
	req    *proxy.Request
	refuse func(kmsg.Request, error) kmsg.Response
	done   atomic.Bool
	stop   func() bool
}

// claim says whether the handler completes the request: the bound has not
// passed (its timer is stopped).
func (o *boundedOutcome) claim() bool {
	if !o.done.CompareAndSwap(false, true) {
		return false
	}
	if o.stop != nil {
		o.stop()
	}
	return true
}

func (o *boundedOutcome) Respond(resp kmsg.Response) {
	if o.claim() {
		o.out.Respond(resp)
	}
}

func (o *boundedOutcome) Forward() {
	if o.claim() {
		o.out.Forward()
	}
}

func (o *boundedOutcome) ForwardRewritten(req kmsg.Request, version int16, onResponse func(kmsg.Response) kmsg.Response) {
	if o.claim() {
		o.out.ForwardRewritten(req, version, onResponse)
	}
}

// RespondFrame takes an owner's answer (forward); an outcome without
// frames gets it decoded.
func (o *boundedOutcome) RespondFrame(data []byte) {
	if !o.claim() {
		return
	}
	if fr, ok := o.out.(proxy.FrameResponder); ok {
		fr.RespondFrame(data)
		return
	}
	resp, err := proxy.DecodeResponse(o.req.Key, o.req.Version, data)
	if err != nil {
		resp = o.refuse(o.req.Body, &clusterError{kerr.CoordinatorNotAvailable, fmt.Sprintf("an owner's answer: %v", err)})
	}
	o.out.Respond(resp)
}
