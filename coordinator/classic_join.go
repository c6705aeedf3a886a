package coordinator

import (
	"fmt"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// ClassicJoinGroup serves a classic member's JoinGroup inside a streams group,
// as Kafka's classicGroupJoinToConsumerGroup does for consumer groups: the
// join is a streams heartbeat of the member (owned tasks from the owned
// partitions and offset sums, metadata from the SubscriptionInfo), answered
// at once with the member epoch as the generation; the assignment follows in
// SyncGroup.
func (c *Coordinator) ClassicJoinGroup(req streams.ClassicJoinRequest, done func(streams.ClassicJoinResult)) {
	c.run(req.GroupID, func(s *shard) { done(c.classicJoin(s, req)) }, func(e *streams.CoordError) { done(streams.ClassicJoinResult{Err: e}) })
}

func (c *Coordinator) classicJoin(s *shard, req streams.ClassicJoinRequest) streams.ClassicJoinResult {
	ch := c.newChange(s)
	res := ch.ClassicJoinGroup(req)
	if err := c.finish(s, ch); err != nil {
		return streams.ClassicJoinResult{Err: fmt.Errorf("join %s: %v: %w", req.GroupID, err, appendFailed(err))}
	}
	return res
}
