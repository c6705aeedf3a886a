package coordinator

import (
	"github.com/streamshift/streamshift/coordinator/streams"
)

// ClassicSyncGroup serves a classic member's SyncGroup from its current
// assignment (Kafka's classicGroupSyncToConsumerGroup).
func (c *Coordinator) ClassicSyncGroup(req streams.ClassicSyncRequest, done func(streams.ClassicSyncResult)) {
	c.run(req.GroupID, func(s *shard) { done(c.classicSync(s, req)) }, func(e *streams.CoordError) { done(streams.ClassicSyncResult{Err: e}) })
}

func (c *Coordinator) classicSync(s *shard, req streams.ClassicSyncRequest) streams.ClassicSyncResult {
	ch := c.newChange(s)
	res := ch.ClassicSyncGroup(req)
	c.finish(s, ch) // it writes nothing
	return res
}
