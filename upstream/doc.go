// Package upstream holds streamshift's control-plane calls to the upstream
// cluster, made with franz-go's kgo and kadm. The coordinator declares what
// it needs from the cluster as interfaces and does no upstream I/O itself;
// this package implements them, and cmd/streamshift builds them and hands
// them over (the coordinator does not import upstream):
//
//   - Metadata (metadata.go) is the coordinator's MetadataSource: the
//     cluster's topics, listed every interval and soon after a request, like
//     a broker's metadata image.
//   - TopicCreator (topic_creator.go) is the route's TopicCreator: a
//     heartbeat's missing internal topics (the coordinator returns them) in
//     one CreateTopics request, as a 4.x broker creates the creatable
//     topics its group coordinator returns, then their metadata at once.
//   - GroupLog (group_log.go) is its durable Log: the group log, a compacted
//     topic of fixed partitions written with one producer transaction per
//     change and read back with read_committed when a partition is gained,
//     as Kafka's coordinator runtime writes and loads __consumer_offsets;
//     each owned partition has a transactional producer of its own, so a
//     new owner fences the previous one.
//   - InstanceGroup (instances.go) is this instance's membership in the
//     upstream consumer group the instances of a cluster share the log's
//     partitions through, with streamshift's own cooperative sticky balancer
//     (instance_balancer.go); every member learns the whole map.
//   - FindCoordinatorNode (find_coordinator.go): the upstream node
//     coordinating a group (FindCoordinator, cached), for package route.
//   - Groups (groups.go) is the ownership claim's UpstreamGroups
//     (DescribeGroups of one group) and the online migration's
//     UpstreamGroups (the same, and the LeaveGroup that fences a taken-over
//     group's classic members).
//
// The package name says "upstream", so the names drop the prefix they had in
// package coordinator: UpstreamMetadata is Metadata, UpstreamTopicCreator is
// TopicCreator. TopicLog became GroupLog, after what it holds (the group log,
// as the README calls it) rather than where.
//
// The anchor members of proxy-owned groups are package upstream/anchor: a
// classic group client (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) with
// its own Options, Manager and Generation, used by route's offset commits;
// it needs nothing of the coordinator, and here its names would need an
// Anchor prefix.
package upstream
