package proxy

import (
	"context"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
	"github.com/streamshift/streamshift/proxy/peer"
)

// A client connection's close, told to the instances it hopped to (issue
// #41). The coordinator fences a member whose connection closed sooner than
// its session (replacement by identity, disconnect expiry: docs/fast-roll.md
// §2 rule 4, §5), but behind one address a member's group requests reach the
// owner in serve calls, whose Done ends with the call, not the connection.
// So the origin remembers which links carried serve calls of a connection
// and, when it closes, sends each peer a conn-closed call naming it; the
// owner gives every serve call of one (origin, incarnation, connection) the
// same close signal (Request.ConnClosed) and closes it on that call.
//
// Fail safe: only the call closes a signal. A link that drops, an origin
// that dies or restarts (a new incarnation) leaves its signals open, i.e. the
// members look connected and their sessions decide, as before. An older
// peer has no handler for the kind and answers UNSUPPORTED_VERSION, which
// the origin ignores: its members keep their sessions.

// peerConnClosedTimeout bounds a conn-closed call: it is a hint, never
// retried.
const peerConnClosedTimeout = 5 * time.Second

// remoteConnKey names a client connection of another instance.
type remoteConnKey struct {
	origin      string
	incarnation int64
	conn        int64
}

// remoteCloses holds the close signals of other instances' client
// connections that made serve calls here.
type remoteCloses struct {
	mu sync.Mutex
	m  map[remoteConnKey]*remoteClose
	// incarnation is each origin's latest: signals of an earlier start
	// are forgotten (left open) when a call of a new one arrives.
	incarnation map[string]int64
}

// remoteClose is one connection's close signal and when it closed.
type remoteClose struct {
	ch chan struct{}
	at closeTime
}

// signal is the close signal of p's connection, made at its first serve
// call, and when it closed.
func (rs *remoteCloses) signal(p *peer.ConnPrincipal) (<-chan struct{}, *closeTime) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.m == nil {
		rs.m, rs.incarnation = map[remoteConnKey]*remoteClose{}, map[string]int64{}
	}
	if inc, ok := rs.incarnation[p.Origin]; ok && inc != p.Incarnation {
		// The origin restarted: its earlier connections are gone, but
		// nobody said they closed (fail safe: open). Only a call of the
		// same start as the signal closes it, so they are dropped.
		for k := range rs.m {
			if k.origin == p.Origin && k.incarnation != p.Incarnation {
				delete(rs.m, k)
			}
		}
	}
	rs.incarnation[p.Origin] = p.Incarnation
	k := remoteConnKey{p.Origin, p.Incarnation, p.ConnID}
	rc := rs.m[k]
	if rc == nil {
		rc = &remoteClose{ch: make(chan struct{})}
		rs.m[k] = rc
	}
	return rc.ch, &rc.at
}

// closed closes the signal of p's connection, if it made serve calls here.
func (rs *remoteCloses) closed(p *peer.ConnPrincipal) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	k := remoteConnKey{p.Origin, p.Incarnation, p.ConnID}
	rc := rs.m[k]
	if rc == nil {
		return false
	}
	delete(rs.m, k)
	rc.at.set(time.Now())
	close(rc.ch)
	return true
}

// len is how many connections' signals are held (for tests).
func (rs *remoteCloses) len() int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return len(rs.m)
}

// connClosedPeer handles a conn-closed call: the origin's connection closed.
func (p *Proxy) connClosedPeer(_ context.Context, c *peer.Call) <-chan peer.Answer {
	ch := make(chan peer.Answer, 1)
	if p.remoteCloses.closed(&c.Principal) {
		p.log.Debug().Str("origin", c.Principal.Origin).Int64("origin_conn", c.Principal.ConnID).Msg("cluster: a client connection that hopped here closed at its instance")
	}
	ch <- peer.Answer{}
	return ch
}

// peersServed records the links a client connection's serve calls took
// (used off its loop, under its own lock).
type peersServed struct {
	mu    sync.Mutex
	links map[*peer.Link]bool
}

// servedBy records that a serve call of the connection went over link.
func (cc *clientConn) servedBy(link *peer.Link) {
	cc.peers.mu.Lock()
	if cc.peers.links == nil {
		cc.peers.links = map[*peer.Link]bool{}
	}
	cc.peers.links[link] = true
	cc.peers.mu.Unlock()
}

// tellPeersClosed sends a conn-closed call to every peer the connection's
// serve calls went to; the answers are not waited for by the loop.
func (cc *clientConn) tellPeersClosed() {
	cc.peers.mu.Lock()
	links := cc.peers.links
	cc.peers.links = nil
	cc.peers.mu.Unlock()
	for link := range links {
		go cc.p.tellConnClosed(link, cc.id)
	}
}

// tellConnClosed sends one conn-closed call.
func (p *Proxy) tellConnClosed(link *peer.Link, connID uint64) {
	pr := peer.ConnPrincipal{Version: peer.PrincipalVersion, Kind: peer.KindConnClosed, Origin: link.Self(),
		Incarnation: p.incarnation, ConnID: int64(connID)}
	clientID := "streamshift"
	data := kafkaframe.AppendRequest(nil, 0, &clientID, kmsg.NewPtrApiVersionsRequest())[4:]
	if _, err := link.Start(context.Background(), pr, data, net.IPv4zero, peerConnClosedTimeout).Wait(); err != nil {
		p.log.Debug().Err(err).Str("peer", link.Peer()).Uint64("conn", connID).Msg("cluster: telling a peer a client connection closed failed; its members there keep their sessions")
	}
}
