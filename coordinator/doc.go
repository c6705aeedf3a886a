// Package coordinator is streamshift's streams-group coordinator (KIP-1071), as
// Apache Kafka 4.4 implements it: it serves StreamsGroupHeartbeat (88) and
// StreamsGroupDescribe (89), v0 and v1, for the groups the proxy owns.
//
// The streams-group state machine is package streams (pure: the model, the
// records and their durable format, the operations); this package is its
// runtime, as Kafka's CoordinatorRuntime: every state change is a record
// an operation of streams emits on a streams.Change; the runtime carries
// out the I/O the change returns (timers, topic creation, metadata
// refreshes, log lines), then appends its records to the group log (log.go)
// or rolls the group back to it, and a response leaves only after the
// records it caused are appended. The work of one group is serialized on
// its executor, groups run in parallel, and no entry point blocks its
// caller (executor.go). Timers run on a Clock so tests run in virtual time.
//
// Entry points (all asynchronous; each callback is called exactly once, on
// the group's goroutine, and must not block or call back into the
// coordinator synchronously). Work that will not run is answered instead,
// on the caller's goroutine or Close's or Unload's, as Kafka's runtime
// fails the pending operations of a shard (a log partition) it closes or unloads:
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
//     settings (streams.ParseConfig reads Kafka-named keys);
//   - classic members inside a streams group (Kafka's KIP-848 mixed
//     groups): ClassicJoinGroup, ClassicSyncGroup, ClassicHeartbeat,
//     ClassicLeaveGroup, ValidateClassicOffsetCommit; EnterClassic
//     (classic.go, with those operations), the one entry of a classic request before its
//     operation: the gate and whether the group is served here, decided
//     under one lock as a verdict (Serve, Forward, Held) returned at once;
//     a held request's Wait calls back on a goroutine of its own;
//   - the online migration: TakeOverClassicGroup, AbandonTakeOver (classic
//     group to streams group), BeginHandBack, HandBack, AbortHandBack,
//     FinishHandBack, ClassicOnly (back to classic); a migrating group's
//     state on its executor (migration_state.go): the gate word
//     (HoldClassic, ReleaseClassic; EnterClassic reads it), the
//     takeovers' pacing and the one takeover at a time
//     (takeover_pacing.go, migration_takeover.go), the hand-back driver's
//     run, held joins and last steps (migration_handback.go; their state:
//     migration_handoff.go); Now and AfterFunc give the migration the
//     coordinator's Clock;
//   - Load: rebuild from a durable log's records; Close, Unload: stop
//     serving everything, or one group.
//
// Files (filedeps_test.go checks the layering: the runtime's four files,
// runtimeFiles there, are the only file cycle here, and package streams
// has none):
//
//   - runtime (Kafka's CoordinatorRuntime): coordinator.go (Coordinator,
//     Options), executor.go (per-group executors, Close, Unload),
//     change.go (a change's inputs, carrying out its I/O, commit,
//     rollback), timers.go (with the Empty groups' expiration timer),
//     clock.go, log.go, load.go, append_errors.go (what a failed append
//     answers); a group's migration state (migration_state.go) lives on
//     its executor behind the queue's two-method hook (queueHook: after a
//     work, when the group goes), and its gate word beside it; a held
//     request is an output of its operation (streams.Hold,
//     streams/hold.go), its answer kept opaquely by the executor until a
//     change releases it (streams.Change.Released) or the group goes: the
//     runtime uses neither file, and they use it;
//   - the group log's partitions: partition_table.go (a group's partition,
//     by Kafka's __consumer_offsets rule; Partitions: which partitions
//     this instance loads and serves; Serving is what
//     package route asks before a group request, FinishLoad and Unload
//     what package cluster's runtime turns the instance group's
//     assignments into);
//   - the entry points, each a thin wrapper that runs its streams
//     operation on the group's executor and answers (run_change.go is
//     that wrapper for operations answered once committed): handle.go,
//     heartbeat.go, describe.go, offsets.go, delete_group.go,
//     list_groups.go, admin_groups.go, group_configs.go, ownership.go,
//     classic.go (the verdict, then JoinGroup with its hold, SyncGroup,
//     Heartbeat, LeaveGroup and the offset check), classic_takeover.go, classic_handback.go; their request and result
//     types are declared where they live, in package streams;
//   - metadata.go: the MetadataSource the runtime reaches the
//     cluster through, and the TopicCreator its callers create the
//     internal topics with that operations return (internal_topics.go:
//     TopicsCreated takes the outcome back).
//   - internal_topics.go: the internal topics an operation finds missing
//     are returned in its result (HeartbeatResult.CreatableTopics, the
//     classic join and sync results), as Kafka's
//     StreamsGroupHeartbeatResult.creatableTopics, for the caller to
//     authorize and create.
//
// Options.Events (events.go) hears the same events as values, with the
// records each commit wrote, for the capture.
//
// Options.Logger gets what Kafka's group coordinator logs: epoch bumps,
// fencings (the log entries of streams' operations), failed appends,
// loads and unloads (the runtime's own).
//
// What it may not touch: the network. It imports none of proxy, route,
// cluster, translate, migration, upstream, kgo or kadm (imports_test.go);
// it never sees a connection or a wire frame, only kmsg's typed requests,
// and it learns which partitions it serves only from Partitions' callers.
//
// Cluster access goes through interfaces, implemented on the upstream
// cluster by package upstream (the coordinator does no upstream I/O itself,
// and cmd/streamshift wires the two): a MetadataSource (partition counts of
// topics; upstream.Metadata lists them) and the durable Log. Internal
// topics are created by the operations' callers (package route authorizes
// the member, then upstream.TopicCreator sends CreateTopics), not here.
//
// The sticky task assignor and the topology configuration are pure functions in
// the packages streams/assignor and streams/topology.
package coordinator
