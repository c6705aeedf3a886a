// Package faultproxy is the e2e's fault-injecting Kafka protocol proxy: a
// test fixture placed between a client and a Kafka cluster (or streamshift),
// with Kafka's four fault primitives (KAFKA-21074's KafkaProtocolFaultProxy):
// an error answered for an API key, a disconnect when a key is sent, a delay
// on a key, a blackholed client. Each is switched on and off while a test
// runs. Every broker address the cluster hands out (Metadata,
// FindCoordinator, DescribeCluster) is rewritten to a listener of the proxy,
// one per broker, so a client's every connection goes through it.
//
// It is not a product feature: plaintext only, no SASL, and it trusts the
// cluster's answers.
package faultproxy

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Proxy is a running fault proxy.
type Proxy struct {
	rules rules

	mu        sync.Mutex
	closed    bool
	listeners map[string]*listener // by upstream address
	bootstrap *listener
	conns     map[*conn]struct{}
	wg        sync.WaitGroup
	// Logf, when set, hears each fault acted on and each connection's end.
	Logf func(format string, args ...any)
}

// listener is the proxy's stand-in for one upstream address.
type listener struct {
	ln       net.Listener
	upstream string
}

// Start starts a proxy in front of bootstrap (one broker's host:port) on a
// free port of 127.0.0.1.
func Start(bootstrap string) (*Proxy, error) {
	p := &Proxy{listeners: map[string]*listener{}, conns: map[*conn]struct{}{}}
	l, err := p.listenFor(bootstrap)
	if err != nil {
		return nil, err
	}
	p.bootstrap = l
	return p, nil
}

// Addr is the address clients bootstrap from.
func (p *Proxy) Addr() string { return p.bootstrap.ln.Addr().String() }

// Close stops every listener and connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for _, l := range p.listeners {
		l.ln.Close()
	}
	for c := range p.conns {
		c.close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return nil
}

// DropConnections closes every client connection (and its upstream one):
// clients reconnect through the same listeners.
func (p *Proxy) DropConnections() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.close()
	}
}

func (p *Proxy) logf(format string, args ...any) {
	if p.Logf != nil {
		p.Logf(format, args...)
	}
}

// listenFor returns the listener standing in for upstream, started on the
// first need.
func (p *Proxy) listenFor(upstream string) (*listener, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("fault proxy closed")
	}
	if l := p.listeners[upstream]; l != nil {
		return l, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fault proxy listener for %s: %w", upstream, err)
	}
	l := &listener{ln: ln, upstream: upstream}
	p.listeners[upstream] = l
	p.wg.Add(1)
	go p.accept(l)
	return l, nil
}

// local is the proxy's address for a broker's host and port.
func (p *Proxy) local(host string, port int32) (string, int32, error) {
	l, err := p.listenFor(net.JoinHostPort(host, strconv.Itoa(int(port))))
	if err != nil {
		return "", 0, err
	}
	a := l.ln.Addr().(*net.TCPAddr)
	return a.IP.String(), int32(a.Port), nil
}

func (p *Proxy) accept(l *listener) {
	defer p.wg.Done()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.DialTimeout("tcp", l.upstream, 10*time.Second)
		if err != nil {
			p.logf("fault proxy: dial %s: %v", l.upstream, err)
			c.Close()
			continue
		}
		cn := &conn{p: p, client: c, up: up, upstream: l.upstream, inflight: map[int32]*slot{}, order: make(chan *slot, 1024), done: make(chan struct{})}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			up.Close()
			return
		}
		p.conns[cn] = struct{}{}
		p.wg.Add(3)
		p.mu.Unlock()
		go cn.readClient()
		go cn.readUpstream()
		go cn.writeClient()
	}
}

// slot is one request's place in its connection's answer order.
type slot struct {
	h     header
	delay time.Duration
	// disconnect: instead of this answer, close the connection.
	disconnect bool
	ready      chan struct{} // closed when frame is set (never, for a blackholed request)
	frame      []byte
}

// conn is one client connection and its upstream twin. Answers go back in
// the order of the requests (Kafka clients match them by order), whether
// they come from the broker or from a rule.
type conn struct {
	p        *Proxy
	client   net.Conn
	up       net.Conn
	upstream string

	mu       sync.Mutex
	inflight map[int32]*slot // by correlation id, waiting for the broker
	order    chan *slot
	done     chan struct{}
	once     sync.Once
}

func (c *conn) close() {
	c.once.Do(func() {
		close(c.done)
		c.client.Close()
		c.up.Close()
	})
}

func (c *conn) end() {
	c.close()
	c.p.mu.Lock()
	delete(c.p.conns, c)
	c.p.mu.Unlock()
	c.p.wg.Done()
}

func (c *conn) readClient() {
	defer c.end()
	for {
		b, err := readFrame(c.client)
		if err != nil {
			return
		}
		h, err := parseRequest(b)
		if err != nil {
			c.p.logf("fault proxy: %v", err)
			return
		}
		v := c.p.judge(h)
		s := &slot{h: h, delay: v.delay, ready: make(chan struct{})}
		forward := true
		if v.act != nil {
			switch v.act.kind {
			case kindBlackhole:
				c.p.logf("fault proxy: blackholed key %d from %q", h.key, h.clientID)
				forward = false // its slot is never ready: nothing after it is answered either
			case kindDisconnect:
				c.p.logf("fault proxy: disconnect on key %d from %q (after forward: %v)", h.key, h.clientID, v.act.afterForward)
				if !v.act.afterForward {
					return
				}
				s.disconnect = true
			case kindError:
				f, err := v.act.answer(h)
				if err != nil {
					c.p.logf("fault proxy: %v; forwarded", err)
					break
				}
				c.p.logf("fault proxy: answered key %d v%d from %q with error %d", h.key, h.version, h.clientID, v.act.code)
				s.frame, forward = f, false
				close(s.ready)
			}
		}
		if forward && h.key == 0 && h.req != nil && h.req.(*kmsg.ProduceRequest).Acks == 0 {
			// acks=0: the broker does not answer, there is no slot to wait on.
			if err := writeFrame(c.up, b); err != nil {
				return
			}
			continue
		}
		if forward {
			c.mu.Lock()
			c.inflight[h.corr] = s
			c.mu.Unlock()
		}
		select {
		case c.order <- s:
		case <-c.done:
			return
		}
		if forward {
			if err := writeFrame(c.up, b); err != nil {
				return
			}
		}
	}
}

func (c *conn) readUpstream() {
	defer c.end()
	for {
		b, err := readFrame(c.up)
		if err != nil {
			return
		}
		if len(b) < 4 {
			return
		}
		corr := int32(uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]))
		c.mu.Lock()
		s := c.inflight[corr]
		delete(c.inflight, corr)
		c.mu.Unlock()
		if s == nil {
			c.p.logf("fault proxy: answer %d from %s to no request", corr, c.upstream)
			return
		}
		if b, err = c.p.rewrite(s.h, b); err != nil {
			c.p.logf("fault proxy: %v", err)
			return
		}
		s.frame = b
		close(s.ready)
	}
}

// rewrite points the broker addresses of an answer at the proxy.
func (p *Proxy) rewrite(h header, b []byte) ([]byte, error) {
	if h.req == nil || (h.key != 3 && h.key != 10 && h.key != 60) {
		return b, nil
	}
	corr, body, err := responseBody(b, h.flexible)
	if err != nil {
		return nil, fmt.Errorf("answer to key %d: %w", h.key, err)
	}
	resp := h.req.ResponseKind()
	resp.SetVersion(h.version)
	if err := resp.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("answer to key %d v%d: %w", h.key, h.version, err)
	}
	if _, err := rewriteAddresses(resp, p.local); err != nil {
		return nil, err
	}
	return responseFrame(corr, h.flexible, resp), nil
}

func (c *conn) writeClient() {
	defer c.end()
	for {
		var s *slot
		select {
		case s = <-c.order:
		case <-c.done:
			return
		}
		select {
		case <-s.ready:
		case <-c.done:
			return
		}
		if s.delay > 0 {
			select {
			case <-time.After(s.delay):
			case <-c.done:
				return
			}
		}
		if s.disconnect {
			return
		}
		if err := writeFrame(c.client, s.frame); err != nil {
			return
		}
	}
}
