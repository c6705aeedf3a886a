// Package streams is the streams-group state machine of the coordinator
// (KIP-1071, as Apache Kafka 4.4's group coordinator implements it), pure:
// it imports the standard library, kmsg, kerr and classicstreams only, and
// does no I/O. Package coordinator is its runtime (Kafka's
// CoordinatorRuntime): it runs the operations on each group's executor,
// appends and replays their records, owns the timers and reaches the
// cluster.
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
//   - configuration: config.go, config_keys.go, group_config_defs.go,
//     group_config_record.go;
//   - reconciliation: current_assignment.go (Kafka's
//     CurrentAssignmentBuilder).
//
// The sticky task assignor and the topology configuration are pure
// functions in the subpackages assignor and topology.
package streams
