package proxy

import (
	"net"
	"sync"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// handler is the gnet event handler of both sides: client connections
// (registered by the accept loops with an *acceptedConn context, which
// OnOpen replaces with a *clientConn) and enrolled upstream connections
// (context *upstreamConn, set by Enroll).
type handler struct {
	gnet.BuiltinEventEngine
	p *Proxy
	// runCh is closed at the first OnTick. gnet calls OnBoot before it
	// registers its event loops, so an Engine.Register between the two
	// fails ("the internal engine is empty": a client connection accepted
	// then was closed, seen in the e2e suite) and races with the loops'
	// registration; the ticker starts after the last loop is registered
	// and ticks at once, so from the first tick Register finds them all.
	runCh   chan struct{}
	runOnce sync.Once
}

func (h *handler) OnBoot(e gnet.Engine) gnet.Action {
	h.p.engine = e
	return gnet.None
}

func (h *handler) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	if uc, ok := c.Context().(*upstreamConn); ok {
		return nil, uc.cc.upstreamOpened(uc.wrap(c), uc)
	}
	p := h.p
	ac, ok := c.Context().(*acceptedConn)
	if !ok {
		return nil, gnet.Close // nothing but the accept loops registers clients
	}
	// Admitted on the accept goroutine (listen.go), which counted it.
	ip := ac.ip
	ac.opened.Store(true)
	c.SetContext(nil)
	refused := p.draining.Load()
	handshakesFull := !refused && p.tls != nil && !p.tls.acquire()
	if refused || handshakesFull {
		p.mu.Lock()
		p.releaseLocked(ip)
		p.mu.Unlock()
		if handshakesFull {
			p.logHandshakesFull(c)
		}
		return nil, gnet.Close
	}
	node := int32(-1)
	if la, ok := c.LocalAddr().(*net.TCPAddr); ok && la.Port != p.listenPort {
		node = int32(la.Port - p.opts.NodePortBase)
	}
	cc := &clientConn{
		p:      p,
		id:     p.connSeq.Add(1),
		conn:   c,
		loop:   c.EventLoop(),
		node:   node,
		remote: c.RemoteAddr().String(),
		ip:     ip,
		since:  time.Now(),
		done:   make(chan struct{}),
	}
	cc.lastRequest.Store(p.clock.Load())
	c.SetContext(cc)
	p.active.Add(1)
	p.mu.Lock()
	p.conns[cc] = c
	p.byID[cc.id] = cc
	p.mu.Unlock()
	p.m.clientConns.Inc()
	p.m.clientConnsTotal.Inc()
	p.connLog().Uint64("conn", cc.id).Str("remote", cc.remote).Int32("node", node).Msg("client connected")
	if p.tls != nil {
		cc.startTLS(c) // dials once the handshake is done
		return nil, gnet.None
	}
	go cc.dial()
	return nil, gnet.None
}

func (h *handler) OnTraffic(c gnet.Conn) gnet.Action {
	switch x := c.Context().(type) {
	case *clientConn:
		if tc, ok := x.conn.(*tlsConn); ok {
			if act, ready := x.tlsTraffic(tc); !ready {
				return act
			}
		}
		act := x.readRequests()
		x.noteArrival()
		return act
	case *upstreamConn:
		if x.tls != nil {
			return x.cc.upstreamTLSTraffic(x.wrap(c).(*tlsConn))
		}
		return x.cc.readResponses(c)
	}
	return gnet.Close
}

// OnTick runs on gnet's ticker goroutine, not on a loop.
func (h *handler) OnTick() (time.Duration, gnet.Action) {
	h.runOnce.Do(func() { close(h.runCh) })
	return h.p.tick(), gnet.None
}

func (h *handler) OnClose(c gnet.Conn, err error) gnet.Action {
	switch x := c.Context().(type) {
	case *clientConn:
		if tc, ok := x.conn.(*tlsConn); ok {
			_ = tc.tr.Close() // ends a handshake still reading
		}
		x.closedClient(err)
	case *upstreamConn:
		x.cc.closedUpstream(x.wrap(c), err)
	}
	return gnet.None
}
