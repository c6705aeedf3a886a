package proxy

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/streamshift/streamshift/internal/kafkaframe"
	"github.com/streamshift/streamshift/proxy/peer"
)

// Envelope (key 58) between streamshift instances (docs/one-address.md §3):
// the origin, where the client is connected, sends a serve call to the
// group's owner (ServeRemote); the owner runs the registered interceptor
// (remote.go) and sends what must go on the client's own upstream
// connection back to the origin as upstream calls (upstreamPeer). Client
// listeners never intercept key 58: brokers refuse it from clients.

func newIncarnation() int64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on the platforms Go supports; a clock
		// value still differs per process start.
		return time.Now().UnixNano()
	}
	return int64(binary.BigEndian.Uint64(b[:]) &^ (1 << 63))
}

// Incarnation is random per process start: peer.ConnPrincipal.Incarnation of
// this instance's calls.
func (p *Proxy) Incarnation() int64 { return p.incarnation }

// PeerHandlers are the internal listener's handlers for this proxy: serve
// calls run the registered interceptors (their asks and forwards go back
// over links to the origin), upstream calls go on this proxy's client
// connections, served-groups calls list the groups this instance serves
// (SetServedGroups). self is this instance's proxy id.
func (p *Proxy) PeerHandlers(self string, links *peer.Links) map[peer.CallKind]peer.Handler {
	return map[peer.CallKind]peer.Handler{
		peer.KindServe: func(ctx context.Context, c *peer.Call) <-chan peer.Answer { return p.servePeer(ctx, c, links) },
		peer.KindUpstream: func(ctx context.Context, c *peer.Call) <-chan peer.Answer {
			return p.upstreamPeer(ctx, self, c)
		},
		peer.KindServedGroups: p.servedGroupsPeer,
		peer.KindConnClosed:   p.connClosedPeer,
	}
}

// SetServeCheck installs the owner's check of a serve call, made before
// any handling (docs/one-address.md §6 rule 2): f says whether the group
// log partition the origin routed by is this instance's and the origin's
// map is not newer than this instance's. A refused call is answered with
// envelope NOT_COORDINATOR, nothing done, so the origin may send it again
// to the owner its map names next.
func (p *Proxy) SetServeCheck(f func(partition, mapGeneration int32) bool) { p.serveCheck.Store(&f) }

// ServeRemote carries an intercepted request to its group's owner over
// link (a serve call) and returns the owner's response (header and body,
// no size prefix: RespondFrame's input), whose correlation id is checked.
// partition and mapGeneration are what the origin routed by; timeout ≤ 0
// is the link's. The request goes as its client sent it; one without the
// client's bytes (a part of a split request) is encoded from its body
// under the client's correlation and client ids.
func (p *Proxy) ServeRemote(ctx context.Context, link *peer.Link, req *Request, partition, mapGeneration int32, timeout time.Duration) ([]byte, error) {
	c := req.Client
	clientID := c.ClientID
	pr := peer.ConnPrincipal{
		Version: peer.PrincipalVersion, Kind: peer.KindServe, Origin: link.Self(), Incarnation: p.incarnation,
		ConnID: int64(c.ConnID), Node: c.Node, ClientID: &clientID, SoftwareName: c.SoftwareName,
		SoftwareVersion: c.SoftwareVersion, RemoteAddr: c.RemoteAddr, Partition: partition, MapGeneration: mapGeneration,
		Principal: c.Principal,
	}
	// The client's own bytes when the request came as bytes: the owner
	// decodes them as a local client's (and a hop never decoded them).
	data := req.frame
	if data == nil {
		data = kafkaframe.AppendRequest(nil, req.CorrelationID, &clientID, req.Body)[4:]
	}
	if cc, ok := req.conn.(*clientConn); ok {
		// Before the call: a close during it is told to the owner too.
		cc.servedBy(link)
	}
	resp, err := link.Call(ctx, pr, data, clientHostAddress(c.RemoteAddr), timeout)
	if err != nil {
		return nil, err
	}
	if len(resp) < 4 || int32(binary.BigEndian.Uint32(resp)) != req.CorrelationID {
		return nil, &peer.Error{Peer: link.Peer(), Code: kerr.CoordinatorNotAvailable.Code, Reason: fmt.Sprintf("answered %d bytes not of correlation id %d", len(resp), req.CorrelationID)}
	}
	return resp, nil
}

// clientHostAddress is the client's IP for ClientHostAddress (Kafka needs 4 or 16
// bytes; an address that does not parse is given as 0.0.0.0).
func clientHostAddress(addr string) net.IP {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip
	}
	return net.IPv4zero
}

// FrameResponder is implemented by the proxy's Outcome: RespondFrame
// answers the client with a response another instance made for it (header
// and body, no size prefix), as it is; its correlation id must be the
// request's, or the client connection closes.
type FrameResponder interface {
	RespondFrame(data []byte)
}

func (o *outcome) RespondFrame(data []byte) {
	if !o.claim("RespondFrame") {
		return
	}
	if len(data) < 4 || int32(binary.BigEndian.Uint32(data)) != o.s.corr {
		o.fail(fmt.Errorf("RespondFrame: %d bytes not of correlation id %d", len(data), o.s.corr))
		return
	}
	frame := make([]byte, 4, 4+len(data))
	binary.BigEndian.PutUint32(frame, uint32(len(data)))
	frame = append(frame, data...)
	cc, s := o.cc, o.s
	cc.onLoop(func() {
		cc.p.m.localResponses.Inc()
		cc.blocked, cc.decoded = false, 0
		cc.completeLocal(s, frame)
		_ = cc.conn.Wake(nil)
	})
}

// upstreamPeer sends an owner's request on one of this proxy's client
// connections, like an ask: behind what the connection sent already, while
// the client's own request waits on the owner, so the broker sees the
// client's order. It is a leaf: it never makes further calls.
func (p *Proxy) upstreamPeer(ctx context.Context, self string, c *peer.Call) <-chan peer.Answer {
	ch := make(chan peer.Answer, 1)
	pr := &c.Principal
	if pr.Origin != self || pr.Incarnation != p.incarnation {
		// A connection of another instance, or of an earlier start of
		// this one: gone.
		ch <- peer.Answer{Code: kerr.NetworkException.Code}
		return ch
	}
	p.mu.Lock()
	cc := p.byID[uint64(pr.ConnID)]
	p.mu.Unlock()
	if cc == nil {
		ch <- peer.Answer{Code: kerr.NetworkException.Code}
		return ch
	}
	frame := make([]byte, 4, 4+len(c.RequestData))
	binary.BigEndian.PutUint32(frame, uint32(len(c.RequestData)))
	frame = append(frame, c.RequestData...)
	answer := cc.askRaw(frame)
	go func() {
		select {
		case a := <-answer:
			switch {
			case a.Err == nil:
				ch <- peer.Answer{Data: a.Body}
			case errors.Is(a.Err, ErrAskClosed):
				ch <- peer.Answer{Code: kerr.NetworkException.Code}
			default: // too many asks on the connection
				ch <- peer.Answer{Code: kerr.CoordinatorNotAvailable.Code}
			}
		case <-cc.done:
			ch <- peer.Answer{Code: kerr.NetworkException.Code}
		case <-ctx.Done():
			ch <- peer.Answer{Code: kerr.CoordinatorNotAvailable.Code}
		}
	}()
	return ch
}

// askRaw sends a request frame of another instance's on the client's
// upstream connection as an ask and answers the broker's whole response
// (header and body, no size prefix) under the frame's own correlation id.
func (cc *clientConn) askRaw(frame []byte) <-chan AskAnswer {
	key, version, corr := kafkaframe.FixedHeader(frame[4:])
	call := &askCall{key: key, version: version, answer: make(chan AskAnswer, 1), raw: true, corr: corr}
	cc.onLoop(func() { cc.sendAsk(call, frame) })
	return call.answer
}
