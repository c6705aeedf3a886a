// Package proxytest runs an interceptor (a route handler) without a proxy,
// a socket or a broker: a Conn plays the client connection, its asks
// answered by a function of the test, and an Outcome records what the
// handler decided, as the client would see it. It is to proxy what
// net/http/httptest is to net/http, and Kroxylicious's MockFilterContext to
// its filters.
// Only tests import it (imports_test.go); it owns no socket, no loop and
// no group.
package proxytest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
	"github.com/streamshift/streamshift/proxy"
)

// ErrNoBroker answers the asks of a Conn that has no Broker.
var ErrNoBroker = errors.New("proxytest: no broker answers this connection's asks")

// Broker answers an ask: req is the request as the broker decodes it (at
// the ask's version). A nil response with a nil error fails the ask.
type Broker func(req kmsg.Request) (kmsg.Response, error)

// Conn is a client connection whose asks are answered by a Broker of the
// test, synchronously and in order. It implements proxy.ClientConn.
type Conn struct {
	// Client is what requests of this connection say about it.
	Client proxy.ClientInfo

	broker Broker
	done   chan struct{}
	close  sync.Once

	mu        sync.Mutex
	asks      []kmsg.Request
	corr      int32
	malformed atomic.Bool
}

// connIDs numbers the connections of the process, as the proxy does.
var connIDs atomic.Uint64

// NewConn is a connection (a ConnID of its own, client id "streams-app",
// from 127.0.0.1, on the bootstrap listener) whose asks broker answers;
// nil: every ask fails.
func NewConn(broker Broker) *Conn {
	return &Conn{
		Client: proxy.ClientInfo{ConnID: connIDs.Add(1), RemoteAddr: "127.0.0.1:50000", Node: -1, ClientID: "streams-app"},
		broker: broker,
		done:   make(chan struct{}),
	}
}

// Request is body (at its version; set it first) as a request of this
// connection, with the next correlation id.
func (c *Conn) Request(body kmsg.Request) *proxy.Request {
	c.mu.Lock()
	c.corr++
	corr := c.corr
	c.mu.Unlock()
	return proxy.NewRequest(c, c.Client, corr, body)
}

// UndecodedRequest is body (at its version) as its client sent it, not
// decoded yet: what a key's hop sees (proxy.RegisterHop). Malformed says
// whether its Decode found the bytes malformed (the proxy would have
// closed the connection).
func (c *Conn) UndecodedRequest(body kmsg.Request) *proxy.Request {
	c.mu.Lock()
	c.corr++
	corr := c.corr
	c.mu.Unlock()
	clientID := c.Client.ClientID
	frame := kafkaframe.AppendRequest(nil, corr, &clientID, body)[4:]
	req, err := proxy.NewUndecodedRequest(c, c.Client, frame, func(error) { c.malformed.Store(true) })
	if err != nil {
		panic(fmt.Sprintf("proxytest: a request kmsg encoded does not parse: %v", err))
	}
	return req
}

// Malformed says whether a request's Decode found its bytes malformed.
func (c *Conn) Malformed() bool { return c.malformed.Load() }

// Ask answers req with the Broker. The broker sees req encoded and decoded
// at its version, and the asker gets the response the same way, so a field
// a version does not carry is lost as on the wire.
func (c *Conn) Ask(req kmsg.Request) <-chan proxy.AskAnswer {
	answer := make(chan proxy.AskAnswer, 1)
	seen, err := roundTripRequest(req)
	if err != nil {
		answer <- proxy.AskAnswer{Err: err}
		return answer
	}
	c.mu.Lock()
	c.asks = append(c.asks, seen)
	c.mu.Unlock()
	select {
	case <-c.done:
		answer <- proxy.AskAnswer{Err: proxy.ErrAskClosed}
		return answer
	default:
	}
	if c.broker == nil {
		answer <- proxy.AskAnswer{Err: ErrNoBroker}
		return answer
	}
	resp, err := c.broker(seen)
	switch {
	case err != nil:
		answer <- proxy.AskAnswer{Err: err}
	case resp == nil || resp.Key() != req.Key():
		answer <- proxy.AskAnswer{Err: fmt.Errorf("proxytest: broker answered %s with %T", kmsg.NameForKey(req.Key()), resp)}
	default:
		resp.SetVersion(req.GetVersion())
		answer <- proxy.AskAnswer{Body: resp.AppendTo(nil)}
	}
	return answer
}

// Done is closed by Close.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Close closes the connection, as a client going away: Done closes, and
// asks not answered yet (and later ones) get proxy.ErrAskClosed.
func (c *Conn) Close() { c.close.Do(func() { close(c.done) }) }

// Asks are the requests asked so far, in order, as the broker saw them.
func (c *Conn) Asks() []kmsg.Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]kmsg.Request(nil), c.asks...)
}

// roundTripRequest is req as a broker decodes it at req's version.
func roundTripRequest(req kmsg.Request) (kmsg.Request, error) {
	out := kmsg.RequestForKey(req.Key())
	if out == nil {
		return nil, fmt.Errorf("proxytest: api key %d unknown", req.Key())
	}
	out.SetVersion(req.GetVersion())
	if err := out.ReadFrom(req.AppendTo(nil)); err != nil {
		return nil, fmt.Errorf("proxytest: %s v%d does not decode: %w", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return out, nil
}

// roundTripResponse is resp as a client decodes it at version.
func roundTripResponse(resp kmsg.Response, version int16) (kmsg.Response, error) {
	resp.SetVersion(version)
	out := kmsg.ResponseForKey(resp.Key())
	out.SetVersion(version)
	if err := out.ReadFrom(resp.AppendTo(nil)); err != nil {
		return nil, fmt.Errorf("proxytest: %s v%d does not decode: %w", kmsg.NameForKey(resp.Key()), version, err)
	}
	return out, nil
}
