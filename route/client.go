// Package proxyadapter plugs the streams-group coordinator into the proxy:
// StreamsGroupHeartbeat (88) and StreamsGroupDescribe (89), v0-v1, are served
// by the coordinator and advertised in ApiVersions. It is the only place that
// knows both packages.
package route

import (
	"fmt"
	"net"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/proxy"
)

// Register routes keys 88 and 89 of p to c.
func Register(p *proxy.Proxy, c *coordinator.Coordinator) error {
	i := Interceptor(c)
	for _, key := range []int16{int16(kmsg.StreamsGroupHeartbeat), int16(kmsg.StreamsGroupDescribe)} {
		if err := p.Register(key, 0, 1, true, i); err != nil {
			return fmt.Errorf("register coordinator: %w", err)
		}
	}
	return nil
}

// Interceptor serves the requests the coordinator knows and forwards the rest.
func Interceptor(c *coordinator.Coordinator) proxy.Interceptor {
	return proxy.InterceptorFunc(func(req *proxy.Request, out proxy.Outcome) {
		client := coordinator.ClientInfo{ClientID: req.Client.ClientID, ClientHost: clientHost(req.Client.RemoteAddr)}
		if !c.Handle(req.Body, client, out.Respond) {
			out.Forward()
		}
	})
}

// clientHost renders an address as Kafka reports a client host ("/1.2.3.4").
func clientHost(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return "/" + host
	}
	return "/" + addr
}
