package faultproxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Relay is a plain TCP relay in front of one address whose protocol the
// fault proxy does not decode: the links between streamshift instances (a
// Kafka Envelope stream, TLS or SASL as the cluster wants). An instance
// advertises the relay's address to the others, so every link into it
// passes here, and Drop cuts them: the link dropped, as a network partition
// that resets connections does.
type Relay struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	conns   map[net.Conn]net.Conn // client side -> target side
	closed  bool
	dropped time.Time // refusing until then
	wg      sync.WaitGroup

	// refused counts the connections cut or refused by Drop.
	refused atomic.Int64
	// Logf, when set, hears each drop and each refused connection.
	Logf func(format string, args ...any)
}

// StartRelay starts a relay to target on a free port of host (a loopback
// address of its own when the instances listen on 127.0.0.x).
func StartRelay(host, target string) (*Relay, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, fmt.Errorf("relay to %s: %w", target, err)
	}
	r := &Relay{ln: ln, target: target, conns: map[net.Conn]net.Conn{}}
	r.wg.Add(1)
	go r.accept()
	return r, nil
}

// Addr is the relay's address, to advertise in the target's stead.
func (r *Relay) Addr() string { return r.ln.Addr().String() }

// Refused is how many connections Drop cut or refused so far.
func (r *Relay) Refused() int64 { return r.refused.Load() }

// Drop closes every relayed connection now and closes each new one at once
// for d: the links into the target are down for d, then come back.
func (r *Relay) Drop(d time.Duration) {
	r.mu.Lock()
	r.dropped = time.Now().Add(d)
	n := len(r.conns)
	for c, up := range r.conns {
		c.Close()
		up.Close()
	}
	r.mu.Unlock()
	r.refused.Add(int64(n))
	r.logf("relay to %s: dropped %d connections, refusing for %s", r.target, n, d)
}

// Close stops the relay and every connection through it.
func (r *Relay) Close() error {
	r.mu.Lock()
	r.closed = true
	r.ln.Close()
	for c, up := range r.conns {
		c.Close()
		up.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
	return nil
}

func (r *Relay) logf(format string, args ...any) {
	if r.Logf != nil {
		r.Logf(format, args...)
	}
}

func (r *Relay) accept() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		r.mu.Lock()
		down := time.Now().Before(r.dropped)
		r.mu.Unlock()
		if down {
			c.Close()
			r.refused.Add(1)
			r.logf("relay to %s: refused a connection from %s (dropped)", r.target, c.RemoteAddr())
			continue
		}
		r.wg.Add(1)
		go r.relay(c)
	}
}

// relay copies both ways between c and a new connection to the target
// until either side ends or Drop closes them.
func (r *Relay) relay(c net.Conn) {
	defer r.wg.Done()
	up, err := net.DialTimeout("tcp", r.target, 5*time.Second)
	if err != nil {
		c.Close()
		return
	}
	if !r.track(c, up) {
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		dst.Close()
		src.Close()
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	<-done
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
}

// track registers both ends so Drop and Close reach them; false (both
// closed) when the relay dropped or closed meanwhile.
func (r *Relay) track(c, up net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || time.Now().Before(r.dropped) {
		c.Close()
		up.Close()
		return false
	}
	r.conns[c] = up
	return true
}
