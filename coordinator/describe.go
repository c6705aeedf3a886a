package coordinator

import (
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// StreamsGroupDescribe serves one describe: each group is read on its own
// queue, and respond is called once all are read.
func (c *Coordinator) StreamsGroupDescribe(req *kmsg.StreamsGroupDescribeRequest, respond func(*kmsg.StreamsGroupDescribeResponse)) {
	resp := kmsg.NewPtrStreamsGroupDescribeResponse()
	resp.Version = req.Version
	resp.Groups = make([]kmsg.StreamsGroupDescribeResponseGroup, len(req.Groups))
	if len(req.Groups) == 0 {
		respond(resp)
		return
	}
	var remaining atomic.Int32
	remaining.Store(int32(len(req.Groups)))
	done := func() {
		if remaining.Add(-1) == 0 {
			respond(resp)
		}
	}
	// Kafka answers the invalid group ids first, then the groups it looked
	// up, each in request order.
	ids := make([]string, 0, len(req.Groups))
	i := 0
	for _, id := range req.Groups {
		if id == "" {
			// Kafka gives no message here.
			resp.Groups[i] = kmsg.NewStreamsGroupDescribeResponseGroup()
			resp.Groups[i].ErrorCode = kerr.InvalidGroupID.Code
			i++
			done()
			continue
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		slot := i
		i++
		c.run(id, func(s *groupQueue) {
			resp.Groups[slot] = c.describeGroup(s, req)
			done()
		}, func(e *streams.CoordError) {
			resp.Groups[slot] = streams.DescribeError(id, e)
			done()
		})
	}
}

func (c *Coordinator) describeGroup(s *groupQueue, req *kmsg.StreamsGroupDescribeRequest) kmsg.StreamsGroupDescribeResponseGroup {
	ch := c.newChange(s)
	out := ch.DescribeGroup(req)
	c.finish(s, ch) // it only reads
	return out
}
