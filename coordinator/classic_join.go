package coordinator

import (
	"time"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// ClassicJoinGroup serves a classic member's JoinGroup inside a streams group,
// as Kafka's classicGroupJoinToConsumerGroup does for consumer groups: the
// join is a streams heartbeat of the member (owned tasks from the owned
// partitions and offset sums, metadata from the SubscriptionInfo), answered
// at once with the member epoch as the generation; the assignment follows in
// SyncGroup.
// The result carries the group's missing internal topics, as a streams
// heartbeat's does (HeartbeatResult.CreatableTopics). The join of a member
// that owns nothing and waits for tasks others still hold is answered once
// they are released (classic_join_hold.go).
func (c *Coordinator) ClassicJoinGroup(req streams.ClassicJoinRequest, done func(streams.ClassicJoinResult)) {
	c.run(req.GroupID, func(s *groupQueue) { c.classicJoin(s, req, done, time.Time{}) },
		func(e *streams.CoordError) { done(streams.ClassicJoinResult{Err: e}) })
}

// ClassicSyncGroup serves a classic member's SyncGroup from its current
// assignment (Kafka's classicGroupSyncToConsumerGroup); it writes nothing.
// Its result carries the missing internal topics as a join's does.
func (c *Coordinator) ClassicSyncGroup(req streams.ClassicSyncRequest, done func(streams.ClassicSyncResult)) {
	var topics []streams.CreatableTopic
	runChange(c, req.GroupID, "sync", func(ch *streams.Change) streams.ClassicSyncResult {
		res := c.withTopics(ch).ClassicSyncGroup(req)
		topics = creatableTopics(ch)
		return res
	}, func(err error) streams.ClassicSyncResult { return streams.ClassicSyncResult{Err: err} },
		func(res streams.ClassicSyncResult) {
			res.CreatableTopics = topics
			done(res)
		})
}
