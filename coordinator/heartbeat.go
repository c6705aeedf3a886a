package coordinator

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// StreamsGroupHeartbeat serves one heartbeat.
func (c *Coordinator) StreamsGroupHeartbeat(req *kmsg.StreamsGroupHeartbeatRequest, client streams.ClientInfo, respond func(*kmsg.StreamsGroupHeartbeatResponse)) {
	if resp := streams.ValidateHeartbeat(req); resp != nil {
		respond(resp)
		return
	}
	// The handling time rides in the closure run allocates anyway: timing
	// costs a clock read, no allocation.
	start := time.Now()
	c.run(req.Group, func(s *groupQueue) {
		respond(c.heartbeat(s, req, client))
		if c.timings != nil {
			c.timings.HeartbeatHandled(time.Since(start))
		}
	}, func(e *streams.CoordError) { respond(streams.HeartbeatError(req, e)) })
}

// heartbeat runs one validated StreamsGroupHeartbeat on the group's queue.
func (c *Coordinator) heartbeat(s *groupQueue, req *kmsg.StreamsGroupHeartbeatRequest, client streams.ClientInfo) *kmsg.StreamsGroupHeartbeatResponse {
	ch := c.newChange(s)
	resp := ch.StreamsGroupHeartbeat(req, client)
	if err := c.finish(s, ch); err != nil {
		return streams.HeartbeatError(req, streams.Errorf(appendFailed(err), "%v", err))
	}
	return resp
}
