package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/streamshift/streamshift/internal/backoff"
)

// The proxy accepts client connections itself, with Go's listeners, and
// hands each admitted one to an event loop (Engine.Register): gnet's own
// acceptor stops the whole engine on any accept error but EAGAIN, EINTR,
// ECONNRESET and ECONNABORTED, so a burst of connections that runs the
// process out of descriptors (EMFILE) would end the proxy. Here such an
// error waits and accepts again, as net/http's Server does, while the
// kernel keeps the connections queued.

// engineAddr is what gnet's engine listens on: it needs one listener to
// run, and a UDP one accepts nothing (no acceptor, so nothing an accept
// error can stop); a datagram sent to it is dropped by OnTraffic.
const engineAddr = "udp4://127.0.0.1:0"

// Accept backs off from a failed accept as net/http's Server does, with
// the jitter of every retry loop (internal/backoff): the listeners of one
// process, out of descriptors together, do not all retry at once.
const (
	acceptBackoffFirst = 5 * time.Millisecond
	acceptBackoffMax   = time.Second
)

// clientListener is one bound listen address and what it serves.
type clientListener struct {
	ln   net.Listener
	what string // "bootstrap" or "node N", for errors and log lines
}

// acceptedConn is the gnet context of a client connection from
// Register until OnOpen replaces it with its *clientConn: the admission
// counted for ip is released if the connection never opens.
type acceptedConn struct {
	ip     netip.Addr
	opened atomic.Bool // OnOpen ran (gnet reports no error when its poller refused the socket)
}

// bindListeners binds every listen address, so a taken or unavailable one
// is an error naming it and its node before anything else happens. Go's
// listeners set SO_REUSEADDR, so a port held only by connections in
// TIME_WAIT (a restarted instance) binds at once.
func (p *Proxy) bindListeners() ([]clientListener, error) {
	lc := net.ListenConfig{KeepAlive: time.Minute}
	// Go (1.24 and later) listens with MPTCP where the kernel has it; gnet
	// reads and writes the socket itself and was built for plain TCP, as
	// its own listeners were.
	lc.SetMultipathTCP(false)
	var lns []clientListener
	for i, addr := range p.listenAddrs() {
		hostPort := strings.TrimPrefix(addr, "tcp://")
		what := "bootstrap"
		if i > 0 {
			what = "node " + strconv.Itoa(int(p.opts.NodeIDMin)+i-1)
		}
		ln, err := lc.Listen(context.Background(), "tcp", hostPort)
		if err != nil {
			for _, l := range lns {
				_ = l.ln.Close()
			}
			var errno syscall.Errno
			if errors.As(err, &errno) {
				return nil, fmt.Errorf("listen %s (%s): %w", hostPort, what, errno)
			}
			return nil, fmt.Errorf("listen %s (%s): %w", hostPort, what, err)
		}
		lns = append(lns, clientListener{ln: ln, what: what})
	}
	return lns, nil
}

// acceptLoops are the bound client listeners and, once Run serves,
// one accept loop per listener. Until then nothing accepts: a client's
// connection completes its TCP handshake and waits in the kernel's accept
// queue (the listen backlog) for the first Accept, so it is served late,
// never accepted and closed for being early.
type acceptLoops struct {
	lns []clientListener
	wg  sync.WaitGroup
}

// start runs the accept loops; it is called once, by Run.
func (a *acceptLoops) start(p *Proxy) {
	for _, l := range a.lns {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			p.acceptLoop(l)
		}()
	}
}

// stop closes the listeners (connections still queued in the kernel are
// reset) and waits for the accept loops to end.
func (a *acceptLoops) stop() {
	for _, l := range a.lns {
		_ = l.ln.Close()
	}
	a.wg.Wait()
}

func (p *Proxy) acceptLoop(l clientListener) {
	retry := backoff.Backoff{Min: acceptBackoffFirst, Max: acceptBackoffMax}
	for {
		c, err := l.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			wait := retry.Next()
			p.acceptFailed(l, err, wait)
			time.Sleep(wait)
			continue
		}
		retry.Reset()
		p.admitAccepted(c)
	}
}

// acceptFailed counts and logs (at most once per interval) an accept that
// failed: out of descriptors (EMFILE, ENFILE) or kernel memory, the
// connection waits in the kernel's queue until one is free.
func (p *Proxy) acceptFailed(l clientListener, err error, backoff time.Duration) {
	l2 := p.limits
	l2.refusedFDs.Inc()
	if ok, held := l2.refusedLogs[2].Allow(p.clock.Load()); ok {
		p.log.Warn().Err(err).Str("listener", l.what).Str("listen", l.ln.Addr().String()).
			Dur("retry_in", backoff).Int64("failed_since_last_line", held).
			Msg("accepting a client connection failed (out of descriptors?); connections wait in the kernel's queue, accepting again after a pause")
	}
}

// admitAccepted applies the connection limits to an accepted connection,
// on the accept goroutine: a refused one is closed at once, before any
// event loop sees it; an admitted one goes to an event loop's OnOpen.
func (p *Proxy) admitAccepted(c net.Conn) {
	if p.draining.Load() {
		_ = c.Close()
		return
	}
	ip := netip.Addr{}
	if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		ip = ta.AddrPort().Addr().Unmap()
	}
	if !p.admit(ip) {
		_ = c.Close()
		return
	}
	// Register dups the socket for the loop and closes c (also when it
	// fails); OnOpen runs before the result is sent.
	ac := &acceptedConn{ip: ip}
	ctx := gnet.NewNetConnContext(gnet.NewContext(context.Background(), ac), c)
	ch, err := p.engine.Register(ctx)
	if err != nil {
		_ = c.Close()
		p.releaseAdmitted(ip, err)
		return
	}
	go func() {
		res := <-ch
		switch {
		case res.Err != nil:
			p.releaseAdmitted(ip, res.Err)
		case !ac.opened.Load(): // the loop's poller refused it and closed it
			p.releaseAdmitted(ip, errors.New("the event loop could not poll the connection"))
		}
	}()
}

// releaseAdmitted uncounts an admitted connection that never reached
// OnOpen (no descriptor left for gnet's dup, the engine stopping).
func (p *Proxy) releaseAdmitted(ip netip.Addr, err error) {
	p.mu.Lock()
	p.releaseLocked(ip)
	p.mu.Unlock()
	p.limits.refusedFDs.Inc()
	if ok, held := p.limits.refusedLogs[2].Allow(p.clock.Load()); ok {
		p.log.Warn().Err(err).Str("remote_ip", ip.String()).Int64("failed_since_last_line", held).
			Msg("client connection closed: handing it to an event loop failed")
	}
}
