package route

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

// A row of the routing table (routes.go) and what every request of it
// passes before its key's handler: the body typed by the key (handle), the
// bound on how long the client may be kept muted (bounded), the split by
// owner (cluster_split.go) and the cluster's gate (clusterGate).

// route is one intercepted key: its handler, its versions and its facts
// (keys.go: the groups it names, how it routes among instances, its
// refusal, how long its handler may keep the client muted). Versions
// from 0 to max are served; a client's request above max goes upstream
// untouched unless capped.
type route struct {
	handler
	keyFacts
	max int16
	// advertise: ApiVersions answers list the key up to max whatever the
	// upstream supports.
	advertise bool
	// capped: max also caps what ApiVersions advertises, and a request
	// above it is refused instead of bypassing the route (proxy
	// RegisterCapped): the topic-id versions of the offset keys, which the
	// routes do not serve (offsetsMaxVersion).
	capped bool
	// migration: routed only with the migration on.
	migration bool
	// cluster: routed only with several instances (Options.Cluster).
	cluster bool
	// around, if not nil, wraps the routed handler (before the split and
	// the gate): a request's repeated mentions (mentions.go).
	around func(handler) handler
}

// handler is a route's handler with the wire key it serves.
type handler struct {
	key   kmsg.Key
	serve proxy.InterceptorFunc
}

// handle types a handler by its request: the key registered is the request
// type's, so a table row cannot register one key for another key's handler,
// and the body is asserted here once instead of at the top of every
// handler. (A row's version rule, up(...) or top(...), still names its key.)
func handle[R kmsg.Request](serve func(req *proxy.Request, r R, out proxy.Outcome)) handler {
	var zero R // Key has a pointer receiver that reads nothing: nil is fine
	return handler{kmsg.Key(zero.Key()), func(req *proxy.Request, out proxy.Outcome) {
		r, ok := req.Body.(R)
		if !ok {
			// The proxy decodes a body by the key it was registered
			// for, so this is a proxy bug, not a client's: the request
			// goes upstream untouched rather than panicking the loop.
			out.Forward()
			return
		}
		serve(req, r, out)
	}}
}

// row completes a table row from its key's facts (keys.go): a gated key's
// handler behind the cluster's gate, a multi-group key's split by owner
// before it (clusterSplit): group requests of groups another instance owns
// never get past them.
func (rs *Routes) row(rt route) route {
	rt.keyFacts = keys[rt.key]
	h := rs.clusterSplit(rt, rs.clusterGate(rt, rt.handler))
	if rt.around != nil {
		h = rt.around(h)
	}
	rt.handler = h
	return rt
}

// clusterGate wraps the route of a gated key: the group a request routes
// by and the answer that refuses it are the row's (the key's facts,
// keys.go). A request for a group another instance
// owns is sent to that owner (forward) and its answer goes back to the
// client; a request for a group nobody owns right now gets
// COORDINATOR_NOT_AVAILABLE; one this instance owns but does not serve
// (loading, fenced) gets the cluster's error at once, before the
// migration gate, the coordinator or the upstream see it. Requests naming
// no single group (a batched OffsetFetch of an admin tool) pass: split by
// owner before (clusterSplit), they name groups owned here only, or none.
// A request that hopped here never hops again: the owner serves it or
// answers the error.
//
// In a mixed release (Hops false) the instances route as before: the
// classic keys and offsets of clients that are not host-routed
// (hostRouted) are served where they arrive, the others get
// NOT_COORDINATOR and find the owner's host.
func (rs *Routes) clusterGate(rt route, h handler) handler {
	if rs.o.Cluster == nil || rt.group == nil {
		return h
	}
	serve, gated, refuse := h.serve, rt.group, rt.refuse
	h.serve = func(req *proxy.Request, out proxy.Outcome) {
		c := rs.o.Cluster
		group, ok := gated(req.Body)
		if !ok {
			serve(req, out)
			return
		}
		if !req.Client.Remote() && c.Hops() {
			self, peer, gen, owned := c.Owner(group)
			switch {
			case !owned:
				out.Respond(refuse(req.Body, noOwner(group)))
				return
			case !self:
				go rs.forward(req, out, serve, refuse, group, peer, gen)
				return
			}
		} else if !req.Client.Remote() && !hostRouted(req.Client) && !streamsKey(req.Key) {
			serve(req, out)
			return
		}
		if err := c.Serving(group); err != nil {
			out.Respond(refuse(req.Body, err))
			return
		}
		serve(req, out)
	}
	return h
}

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
