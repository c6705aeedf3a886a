package proxy

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
	"github.com/streamshift/streamshift/proxy/peer"
)

// The owner's side of a serve call (docs/one-address.md §3): the request
// of a client connected to another instance (the origin) runs through the
// registered interceptor unchanged. Its connection is a remoteConn (asks
// go back to the origin as upstream calls, on the client's own upstream
// connection there) and its outcome a remoteOutcome (the answer becomes
// the envelope's ResponseData, byte for byte what a client of this
// instance would get).

// remoteConnID is the ConnID a remote client has here: the top bit set
// (local connections count up from 1 and never reach it) and a hash of the
// origin, its incarnation and its connection id, so answers cached per
// connection (authorization) are never shared between two clients.
func remoteConnID(p *peer.ConnPrincipal) uint64 {
	h := fnv.New64a()
	_, _ = fmt.Fprintf(h, "%s\x00%d\x00%d", p.Origin, p.Incarnation, p.ConnID)
	return h.Sum64() | 1<<63
}

// remotePrincipal is ClientInfo.Principal of a client of the origin: a
// SASL principal as the origin read it; the transport principal is the
// origin's own (each instance may present its own upstream-tls
// certificate), so it is named after the origin.
func remotePrincipal(p *peer.ConnPrincipal) string {
	if p.Principal == TransportPrincipal {
		return TransportPrincipal + "@" + p.Origin
	}
	return p.Principal
}

// remoteConn is a client connection held by the origin (ClientConn).
type remoteConn struct {
	// link is the link to the origin; nil when the map does not name it.
	link *peer.Link
	// back is the serve call's principal as an upstream call's.
	back peer.ConnPrincipal
	call *peer.Call
	ctx  context.Context
	// closed is the client connection's close signal (peer_conn_closed.go).
	closed   <-chan struct{}
	closedAt *closeTime
}

// start sends a request (header and body) to the origin's client
// connection: written before it returns, so the broker sees a handler's
// asks and forward in the order it made them. ctx bounds the wait for the
// answer (with the link's timeout).
func (rc *remoteConn) start(ctx context.Context, data []byte) *peer.Pending {
	if rc.link == nil {
		return peer.Failed(&peer.Error{Peer: rc.back.Origin, Code: kerr.CoordinatorNotAvailable.Code, Reason: "no link to the instance the client is connected to"})
	}
	return rc.link.Start(ctx, rc.back, data, rc.call.ClientIP, 0)
}

// Ask implements ClientConn: an upstream call to the origin. Its answer is
// awaited beyond the serve call, up to the link's timeout: an ask may
// outlive the request that made it (the authorization cache's background
// refresh: the heartbeat is answered at once), and one whose answer were
// dropped when the owner answered would be sent again by the next
// heartbeat, a request upstream per hopped heartbeat (issue #43). The
// origin answers NETWORK_EXCEPTION once the client connection is gone.
func (rc *remoteConn) Ask(req kmsg.Request) <-chan AskAnswer {
	ch := make(chan AskAnswer, 1)
	clientID := "streamshift"
	pp := rc.start(context.Background(), kafkaframe.AppendRequest(nil, 0, &clientID, req)[4:])
	key, version := req.Key(), req.GetVersion()
	go func() {
		data, err := pp.Wait()
		if err != nil {
			ch <- AskAnswer{Err: askError(err)}
			return
		}
		flexible, _ := kafkaframe.RequestFlexible(key, version)
		at, err := kafkaframe.ResponseBodyAt(data, key, flexible)
		if err != nil {
			ch <- AskAnswer{Err: err}
			return
		}
		ch <- AskAnswer{Body: data[at:]}
	}()
	return ch
}

// askError: the client's connection at the origin is gone (the origin
// answers NETWORK_EXCEPTION) is what a local ask says when its connection
// closed.
func askError(err error) error {
	if peer.ErrorCode(err) == kerr.NetworkException.Code {
		return fmt.Errorf("%w (%v)", ErrAskClosed, err)
	}
	return err
}

// Done implements ClientConn: the call's deadline (after it the origin
// has answered the client already).
func (rc *remoteConn) Done() <-chan struct{} { return rc.ctx.Done() }

// connClosed is closed when the origin tells that the client connection
// closed; open while that is unknown.
func (rc *remoteConn) connClosed() <-chan struct{} { return rc.closed }

// connClosedAt is when the origin told that the connection closed.
func (rc *remoteConn) connClosedAt() func() time.Time { return rc.closedAt.get }

// remoteOutcome completes a serve call (Outcome).
type remoteOutcome struct {
	rc       *remoteConn
	call     *peer.Call
	clientID *string
	answer   chan peer.Answer
	used     atomic.Bool
	log      zerolog.Logger
}

func (o *remoteOutcome) claim(method string) bool {
	if o.used.CompareAndSwap(false, true) {
		return true
	}
	o.log.Error().Str("api", kmsg.NameForKey(o.call.Key)).Str("method", method).Msg("interceptor completed a request of another instance's client twice; ignored")
	return false
}

// fail answers what the proxy would close a local client's connection for:
// UNKNOWN_SERVER_ERROR, nothing sent.
func (o *remoteOutcome) fail(err error) {
	o.log.Error().Str("api", kmsg.NameForKey(o.call.Key)).Err(err).Msg("interceptor outcome unusable for another instance's client")
	o.answer <- peer.Answer{Code: kerr.UnknownServerError.Code}
}

func (o *remoteOutcome) Respond(resp kmsg.Response) {
	if !o.claim("Respond") {
		return
	}
	if resp == nil || resp.Key() != o.call.Key {
		o.fail(fmt.Errorf("Respond needs a %s response", kmsg.NameForKey(o.call.Key)))
		return
	}
	resp.SetVersion(o.call.Version)
	o.answer <- peer.Answer{Data: kafkaframe.AppendResponse(nil, o.call.Corr, resp)[4:]}
}

// Forward sends the client's bytes as they are; the broker's answer comes
// back as it is, under the client's correlation id (the origin put it
// back).
func (o *remoteOutcome) Forward() {
	if !o.claim("Forward") {
		return
	}
	pp := o.rc.start(o.rc.ctx, o.call.RequestData)
	go func() {
		data, err := pp.Wait()
		if err != nil {
			o.answer <- peer.Answer{Code: peer.ErrorCode(err)}
			return
		}
		o.answer <- peer.Answer{Data: data}
	}()
}

func (o *remoteOutcome) ForwardRewritten(req kmsg.Request, version int16, onResponse func(kmsg.Response) kmsg.Response) {
	if !o.claim("ForwardRewritten") {
		return
	}
	if req == nil || req.Key() != o.call.Key {
		o.fail(fmt.Errorf("ForwardRewritten needs a %s request", kmsg.NameForKey(o.call.Key)))
		return
	}
	if version < 0 || version > req.MaxVersion() {
		o.fail(fmt.Errorf("ForwardRewritten: %s v%d unknown", kmsg.NameForKey(o.call.Key), version))
		return
	}
	req.SetVersion(version)
	pp := o.rc.start(o.rc.ctx, kafkaframe.AppendRequest(nil, o.call.Corr, o.clientID, req)[4:])
	go func() {
		data, err := pp.Wait()
		if err != nil {
			o.answer <- peer.Answer{Code: peer.ErrorCode(err)}
			return
		}
		resp, err := kafkaframe.DecodeResponse(o.call.Key, version, data)
		if err == nil && onResponse != nil {
			resp, err = callOnResponse(onResponse, resp)
		}
		if err == nil && (resp == nil || resp.Key() != o.call.Key) {
			err = fmt.Errorf("interceptor returned no %s response", kmsg.NameForKey(o.call.Key))
		}
		if err != nil {
			o.fail(fmt.Errorf("rewritten response: %w", err))
			return
		}
		resp.SetVersion(o.call.Version)
		o.answer <- peer.Answer{Data: kafkaframe.AppendResponse(nil, o.call.Corr, resp)[4:]}
	}()
}

// servePeer runs a serve call: the request, decoded as a local one would
// be, goes to the interceptor registered for its key and version.
func (p *Proxy) servePeer(ctx context.Context, c *peer.Call, links *peer.Links) <-chan peer.Answer {
	ch := make(chan peer.Answer, 1)
	if check := p.serveCheck.Load(); check != nil && !(*check)(c.Principal.Partition, c.Principal.MapGeneration) {
		ch <- peer.Answer{Code: kerr.NotCoordinator.Code}
		return ch
	}
	reg := p.reg.lookup(c.Key, c.Version)
	if reg == nil {
		// Not a key this instance serves at that version: nothing done.
		ch <- peer.Answer{Code: kerr.UnsupportedVersion.Code}
		return ch
	}
	h, err := kafkaframe.ParseRequestHeader(c.RequestData)
	if err != nil { // openEnvelope parsed it already
		ch <- peer.Answer{Code: kerr.InvalidRequest.Code}
		return ch
	}
	if reg.bodyLimit > 0 && len(c.RequestData) > reg.bodyLimit {
		resp := reg.oversize(c.Version, len(c.RequestData))
		if resp == nil || resp.Key() != c.Key {
			ch <- peer.Answer{Code: kerr.InvalidRequest.Code}
			return ch
		}
		resp.SetVersion(c.Version)
		ch <- peer.Answer{Data: kafkaframe.AppendResponse(nil, c.Corr, resp)[4:]}
		return ch
	}
	body := kmsg.RequestForKey(c.Key)
	body.SetVersion(c.Version)
	if err := body.ReadFrom(c.RequestData[h.BodyAt:]); err != nil {
		ch <- peer.Answer{Code: kerr.InvalidRequest.Code}
		return ch
	}
	kafkaStrings(body)
	back := c.Principal
	back.Kind = peer.KindUpstream
	var link *peer.Link
	if links != nil {
		link = links.Link(c.Principal.Origin)
	}
	rc := &remoteConn{link: link, back: back, call: c, ctx: ctx}
	rc.closed, rc.closedAt = p.remoteCloses.signal(&c.Principal)
	clientID := ""
	if h.ClientID != nil {
		clientID = kafkaString(*h.ClientID)
	}
	info := ClientInfo{ConnID: remoteConnID(&c.Principal), RemoteAddr: c.Principal.RemoteAddr, Node: c.Principal.Node,
		ClientID: clientID, SoftwareName: c.Principal.SoftwareName, SoftwareVersion: c.Principal.SoftwareVersion,
		Principal: remotePrincipal(&c.Principal)}
	out := &remoteOutcome{rc: rc, call: c, clientID: h.ClientID, answer: ch,
		log: p.log.With().Str("origin", c.Principal.Origin).Int64("origin_conn", c.Principal.ConnID).Logger()}
	p.m.intercepted.Inc()
	p.peerWorkers.Run(func() {
		defer func() {
			if r := recover(); r != nil {
				p.log.Error().Str("api", kmsg.NameForKey(c.Key)).Interface("panic", r).Msg("interceptor panicked on another instance's request")
				if out.used.CompareAndSwap(false, true) {
					ch <- peer.Answer{Code: kerr.UnknownServerError.Code}
				}
			}
		}()
		reg.i.Intercept(NewRequest(rc, info, c.Corr, body), out)
	})
	return ch
}
