package coordinator

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// Handle serves a request if it is one the coordinator serves (keys 88 and
// 89) and reports whether it took it; respond is called exactly once, from
// another goroutine unless the request is invalid or the coordinator closed.
func (c *Coordinator) Handle(req kmsg.Request, client streams.ClientInfo, respond func(kmsg.Response)) bool {
	switch r := req.(type) {
	case *kmsg.StreamsGroupHeartbeatRequest:
		c.StreamsGroupHeartbeat(r, client, func(resp *kmsg.StreamsGroupHeartbeatResponse) { respond(resp) })
		return true
	case *kmsg.StreamsGroupDescribeRequest:
		c.StreamsGroupDescribe(r, func(resp *kmsg.StreamsGroupDescribeResponse) { respond(resp) })
		return true
	}
	return false
}
