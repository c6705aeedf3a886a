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
//   - DeleteGroup, ListGroups, Owns, Summary, SourceTopics: group
//     administration; Ownership.Claim (ownership.go): the group becomes the
//     proxy's;
//   - DescribeGroupConfigs, AlterGroupConfigs, SetGroupConfig: per-group
//     settings (ParseConfig reads Kafka-named keys);
//   - classic members inside a streams group (Kafka's KIP-848 mixed
//     groups): ClassicJoinGroup, ClassicSyncGroup, ClassicHeartbeat,
//     ClassicLeaveGroup, ValidateClassicOffsetCommit, MayServeClassic;
//   - the online migration: TakeOverClassicGroup, AbandonTakeOver (classic
//     group to streams group), BeginHandBack, HandBack, AbortHandBack,
//     FinishHandBack, ClassicOnly (back to classic); Now and AfterFunc give
//     the migration the coordinator's Clock;
//   - Load: rebuild from a durable log's records; Close, Unload: stop
//     serving everything, or one group.
//
// Files, bottom-up (filedeps_test.go checks the layering: the model uses
// nothing above it, and the runtime's four files are the only file cycle):
//
//   - model: tasks.go (task sets), records.go (record types and values),
//     record_helpers.go (every record is built there, as Kafka's
//     StreamsCoordinatorRecordHelpers), group.go (Group, Member, states),
//     group_memory.go (what Kafka keeps in memory only), replay.go,
//     configured_topology.go, handback_state.go, errors.go (coordError);
//   - durable format: record_values.go (versioned values), record_codec.go;
//   - runtime (Kafka's CoordinatorRuntime): coordinator.go (Coordinator,
//     Options), executor.go (per-group executors, Close, Unload),
//     change.go (emit, commit, rollback), timers.go, clock.go, log.go,
//     load.go, logging.go;
//   - configuration: config.go, config_keys.go, group_config_defs.go,
//     group_config_record.go, group_configs.go; cluster access:
//     metadata.go;
//   - the streams heartbeat: heartbeat_validate.go (request checks, before
//     the group's queue), heartbeat.go (Kafka's streamsGroupHeartbeat in
//     its named steps: getOrCreateGroup, getOrCreateMember,
//     updateMemberMetadata, checkTopology, writeMember,
//     maybeBumpGroupEpoch, updateTargetAssignment, maybeReconcile,
//     updateSession, buildResponse), heartbeat_member.go (member and
//     static-member updates), topology_request.go, topology_config.go,
//     target_assignment.go, target_assignment_timing.go,
//     current_assignment.go (reconciliation), endpoints.go; leave.go,
//     fence.go (removing a member), session.go (session, rebalance and
//     classic timeouts);
//   - the other operations: handle.go, describe.go, offsets.go,
//     delete_group.go, list_groups.go, admin_groups.go, ownership.go;
//   - classic members and the migration: classic_join.go, classic_sync.go,
//     classic_heartbeat.go, classic_served.go, classic_takeover.go,
//     classic_handback.go.
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
// the packages streams/assignor and streams/topology.
package coordinator
