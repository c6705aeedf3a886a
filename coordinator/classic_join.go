package coordinator

import "github.com/streamshift/streamshift/coordinator/streams"

// ClassicJoinGroup serves a classic member's JoinGroup inside a streams group,
// as Kafka's classicGroupJoinToConsumerGroup does for consumer groups: the
// join is a streams heartbeat of the member (owned tasks from the owned
// partitions and offset sums, metadata from the SubscriptionInfo), answered
// at once with the member epoch as the generation; the assignment follows in
// SyncGroup.
func (c *Coordinator) ClassicJoinGroup(req streams.ClassicJoinRequest, done func(streams.ClassicJoinResult)) {
	runChange(c, req.GroupID, "join", func(ch *streams.Change) streams.ClassicJoinResult { return ch.ClassicJoinGroup(req) },
		func(err error) streams.ClassicJoinResult { return streams.ClassicJoinResult{Err: err} }, done)
}

// ClassicSyncGroup serves a classic member's SyncGroup from its current
// assignment (Kafka's classicGroupSyncToConsumerGroup); it writes nothing.
func (c *Coordinator) ClassicSyncGroup(req streams.ClassicSyncRequest, done func(streams.ClassicSyncResult)) {
	runChange(c, req.GroupID, "sync", func(ch *streams.Change) streams.ClassicSyncResult { return ch.ClassicSyncGroup(req) },
		func(err error) streams.ClassicSyncResult { return streams.ClassicSyncResult{Err: err} }, done)
}
