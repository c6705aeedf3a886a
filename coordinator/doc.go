// Package coordinator is streamshift's streams-group coordinator (KIP-1071), as
// Apache Kafka 4.4 implements it: it serves StreamsGroupHeartbeat (88) and
// StreamsGroupDescribe (89), v0 and v1, for the groups the proxy owns.
//
// Every state change is a record mirroring Kafka's streams-group records
// (records.go; a durable log stores them in the versioned format of
// record_values.go). The in-memory state of a group is what replaying its records
// gives (replay.go); a response leaves only after the records it caused are
// appended to the group log (log.go). The work of one group is serialized on
// its executor, groups run in parallel, and no entry point blocks its caller
// (executor.go). Timers run on a Clock so tests run in virtual time.
//
// Entry points (all asynchronous; each callback is called exactly once, on
// the group's goroutine, and must not block or call back into the
// coordinator synchronously). Work that will not run is answered instead,
// on the caller's goroutine or Close's or Unload's, as Kafka's runtime
// fails the pending operations of a shard it closes or unloads:
// COORDINATOR_NOT_AVAILABLE once the coordinator is closed, NOT_COORDINATOR
// for a group unloaded (Unload) while its requests waited:
//
//   - Handle: keys 88 and 89 as kmsg requests (what package route plugs into
//     the proxy), or StreamsGroupHeartbeat / StreamsGroupDescribe directly;
//   - ValidateOffsetCommit, ValidateOffsetFetch: Kafka's member and epoch
//     checks of offset commits and fetches for a streams group;
//   - DeleteGroup, ListGroups, Owns: group administration;
//   - Load: rebuild from a durable log's records; SetGroupConfig: per-group
//     settings (ParseConfig reads Kafka-named keys);
//   - Close, Unload: stop serving everything, or one group.
//
// Options.Logger gets what Kafka's group coordinator logs: epoch bumps,
// fencings, failed appends, loads (logging.go).
//
// Cluster access goes through interfaces, implemented on the upstream
// cluster by package upstream (the coordinator does no upstream I/O itself,
// and cmd/streamshift wires the two): a MetadataSource (partition counts of
// topics; upstream.Metadata lists them), a TopicCreator (internal topics;
// upstream.TopicCreator sends CreateTopics) and the durable Log.
//
// The sticky task assignor and the topology configuration are pure functions in
// the subpackages assignor and topology.
package coordinator
