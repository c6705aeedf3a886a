// Package streams is the streams-group state machine of the coordinator
// (KIP-1071, as Apache Kafka 4.4's GroupMetadataManager implements it),
// pure: it imports the standard library, kmsg, kerr and classicstreams
// only (imports_test.go), starts no goroutine and does no I/O. Package
// coordinator is its runtime (Kafka's CoordinatorRuntime): it runs each
// operation on the group's executor and carries out what the operation
// returns.
//
// An operation runs on a Change (change.go), Kafka's CoordinatorResult. The
// runtime fills the change's inputs (the group, its config, now, the
// metadata image, the assignor, the ownership claim waiting for the group,
// which timers are armed); the operation emits records, each replayed into
// the group at once so later steps see it, and collects the I/O it needs as
// values, in order:
//
//   - timers to arm or cancel (TimerOp, keyed as Kafka's session-timeout-,
//     rebalance-timeout-, ... timers; timer_keys.go); a timer's Fire is an
//     operation run on a change of its own when it fires;
//   - internal topics to create and topics whose metadata to refresh, as
//     Kafka's StreamsGroupHeartbeatResult.creatableTopics (the result comes
//     back through topicsCreated on the group's queue);
//   - log lines (LogEntry, log_entry.go), built as zerolog events are,
//     formatted only when the runtime writes them: values rather than a
//     logger interface, so an operation has no effect but its change and a
//     test can read what it would log;
//   - the claim it took, and its Outcome: commit the records (the answer
//     leaves once they are in the log) or roll the group back to the log.
//
// Files, bottom-up (coordinator/filedeps_test.go checks the layering: the
// model uses nothing above it, and no file cycle exists):
//
//   - model: tasks.go (task sets), records.go (record types and values),
//     record_helpers.go (every record is built there, as Kafka's
//     StreamsCoordinatorRecordHelpers), group.go (Group, Member, states),
//     group_memory.go (what Kafka keeps in memory only), replay.go,
//     configured_topology.go, handback_state.go, errors.go (CoordError);
//   - durable format: record_values.go (versioned values), record_codec.go;
//     golden bytes per type and version in testdata/records
//     (record_golden_test.go; previous_reader_test.go is the previous
//     release's reader);
//   - configuration: config.go, config_keys.go, group_config_defs.go,
//     group_config_record.go, group_configs.go;
//   - the change: change.go (inputs, effects, outcome), timer_keys.go,
//     log_entry.go, logging.go (Kafka's log lines), metadata.go (the
//     metadata image, the topics to create);
//   - the streams heartbeat: heartbeat_validate.go (request checks, before
//     the group's queue), record_bounds.go (the record sizes Kafka's log
//     would refuse, checked from lengths), heartbeat.go (StreamsGroupHeartbeat: Kafka's
//     streamsGroupHeartbeat in its named steps: getOrCreateGroup,
//     getOrCreateMember, updateMemberMetadata, checkTopology, writeMember,
//     maybeBumpGroupEpoch, updateTargetAssignment, maybeReconcile,
//     updateSession, buildResponse), heartbeat_member.go,
//     topology_request.go, topology_config.go, target_assignment.go,
//     target_assignment_timing.go, warmup.go (warm-up tasks: the
//     refinement of the assignor's target, beyond 4.4),
//     current_assignment.go (reconciliation, Kafka's
//     CurrentAssignmentBuilder), heartbeat_interval.go (the short interval
//     while a member reconciles, beyond 4.4), heartbeat_session_expiry.go
//     (a survivor's heartbeat timed to a dead member's session expiry,
//     beyond 4.4), endpoints.go; leave.go, fence.go
//     (removing a member), session.go (session, rebalance and classic
//     timeouts);
//   - the other operations: describe.go, offsets.go (offset commit and
//     fetch validation), delete_group.go, group_expiration.go (an Empty
//     group's deletion after the check interval);
//   - classic members and the migration's records: classic_join.go
//     (JoinGroup, and its hold for its tasks), classic_sync.go, classic_heartbeat.go (Heartbeat and LeaveGroup),
//     classic_takeover.go (TakeOverClassicGroup), classic_handback.go.
//
// The sticky task assignor (with rack-aware standbys, client_tags.go) and
// the topology configuration are pure functions in the subpackages assignor
// and topology.
package streams
