package coordinator

import (
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// HeartbeatResult is what a streams heartbeat gives its caller, Kafka's
// StreamsGroupHeartbeatResult: the response, and the I/O the caller does
// for it.
type HeartbeatResult struct {
	// Response is nil when NotServed.
	Response *kmsg.StreamsGroupHeartbeatResponse
	// CreatableTopics are the group's missing internal topics (with
	// Options.CreateTopics): the caller creates them if the client may
	// (CREATE), then reports with TopicsCreated, whatever the response
	// says.
	CreatableTopics []streams.CreatableTopic
	// NotServed: the heartbeat asked to be served only by a group the
	// coordinator holds (ServedOnly) and there is none; nothing ran.
	NotServed bool
}

// HeartbeatOptions say how a heartbeat is served.
type HeartbeatOptions struct {
	// ServedOnly: a group the coordinator does not hold is not created
	// or answered: the result says NotServed, and the caller decides (the
	// route claims the group, forwards, or answers as Kafka does). The
	// check runs on the group's queue with the heartbeat: one crossing.
	ServedOnly bool
}

// Heartbeat serves one heartbeat; done is called exactly once, from the
// group's queue unless the request is invalid or the coordinator closed.
func (c *Coordinator) Heartbeat(req *kmsg.StreamsGroupHeartbeatRequest, client streams.ClientInfo, opts HeartbeatOptions, done func(HeartbeatResult)) {
	if resp := streams.ValidateHeartbeat(req); resp != nil {
		done(HeartbeatResult{Response: resp})
		return
	}
	// The handling time rides in the closure run allocates anyway: timing
	// costs a clock read, no allocation.
	start := time.Now()
	c.run(req.Group, func(s *groupQueue) {
		if opts.ServedOnly && s.group == nil {
			done(HeartbeatResult{NotServed: true})
			return
		}
		done(c.heartbeat(s, req, client))
		if c.timings != nil {
			c.timings.HeartbeatHandled(time.Since(start))
		}
	}, func(e *streams.CoordError) { done(HeartbeatResult{Response: streams.HeartbeatError(req, e)}) })
}

// StreamsGroupHeartbeat serves one heartbeat for a caller that creates no
// topics (tests, tools): the topics it returns are reported not created at
// once, so a later heartbeat returns them again. (Heartbeat's work, without
// an adapter closure per call.)
func (c *Coordinator) StreamsGroupHeartbeat(req *kmsg.StreamsGroupHeartbeatRequest, client streams.ClientInfo, respond func(*kmsg.StreamsGroupHeartbeatResponse)) {
	if resp := streams.ValidateHeartbeat(req); resp != nil {
		respond(resp)
		return
	}
	start := time.Now()
	c.run(req.Group, func(s *groupQueue) {
		res := c.heartbeat(s, req, client)
		c.TopicsCreated(req.Group, TopicNames(res.CreatableTopics), nil)
		respond(res.Response)
		if c.timings != nil {
			c.timings.HeartbeatHandled(time.Since(start))
		}
	}, func(e *streams.CoordError) { respond(streams.HeartbeatError(req, e)) })
}

// heartbeat runs one validated StreamsGroupHeartbeat on the group's queue.
func (c *Coordinator) heartbeat(s *groupQueue, req *kmsg.StreamsGroupHeartbeatRequest, client streams.ClientInfo) HeartbeatResult {
	ch := c.withTopics(c.newChange(s))
	resp := ch.StreamsGroupHeartbeat(req, client)
	topics := creatableTopics(ch)
	if err := c.finish(s, ch); err != nil {
		resp = streams.HeartbeatError(req, streams.Errorf(appendFailed(err), "%v", err))
	}
	return HeartbeatResult{Response: resp, CreatableTopics: topics}
}
