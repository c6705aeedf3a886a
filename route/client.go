package route

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/proxy"
)

// coordinatorClient is the client of a request as the coordinator reports
// it in StreamsGroupDescribe (Kafka's client id and client host).
func coordinatorClient(req *proxy.Request) streams.ClientInfo {
	// ConnID and Closed let the coordinator tell whether the connection of
	// a member's latest request is closed (replacement by identity, #28).
	c := clientConnOf(req)
	c.ClientID, c.ClientHost = req.Client.ClientID, clientHost(req.Client.RemoteAddr)
	return c
}

// clientConnOf is the connection of req alone: its id, its close signal
// and when that closed. The signal closes once the client connection of req
// closes, also for a client connected to another instance, which tells
// this one when it closes (issue #41, proxy/peer_conn_closed.go): there a
// request's Done ends with the serve call, not with the connection, so it
// must never be taken for the connection's.
func clientConnOf(req *proxy.Request) streams.ClientInfo {
	return streams.ClientInfo{ConnID: req.Client.ConnID, Closed: req.ConnClosed(), ClosedAt: req.ConnClosedAt()}
}

// clientHost renders an address as Kafka reports a client host ("/1.2.3.4").
func clientHost(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return "/" + host
	}
	return "/" + addr
}

// requestContext ends when the client connection closes (for a client of
// another instance: when its request was answered) or after d.
func requestContext(req *proxy.Request, d time.Duration) (context.Context, context.CancelFunc) {
	return untilClosed(req.Done(), d)
}

// connContext ends when the client connection closes or after d, also for
// a client of another instance, whose request ends when the owner answers
// it: what outlives the request on the client's connection (a background
// refresh of an authorization answer) waits with it.
func connContext(req *proxy.Request, d time.Duration) (context.Context, context.CancelFunc) {
	return untilClosed(req.ConnClosed(), d)
}

func untilClosed(closed <-chan struct{}, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	go func() {
		select {
		case <-closed:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// kafkaCode is the Kafka error code err wraps (UNKNOWN_SERVER_ERROR if
// none).
func kafkaCode(err error) int16 {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return kerr.UnknownServerError.Code
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
