// Package classicstreams reads and writes the rebalance metadata of classic
// Kafka Streams members, byte for byte as the Java client does:
//
//   - the consumer protocol envelope of JoinGroup and SyncGroup
//     (ConsumerProtocolSubscription / ConsumerProtocolAssignment, v0-v3),
//   - Kafka Streams' SubscriptionInfo (JoinGroup user data, v1-v11),
//   - Kafka Streams' AssignmentInfo (SyncGroup user data, v1-v11),
//
// and holds the pure functions that translate between them and a KIP-1071
// streams group (tasks from owned partitions and offset sums, the active task
// list aligned to the assigned partitions, the IQ host maps, the version rule).
//
// Every decoder bounds each length by the bytes that remain before it
// allocates, never panics, and reports the byte offset where decoding failed
// (see DecodeError). Decoders ignore trailing bytes, as the Java readers do.
// Byte slices in decoded values (user data) alias the input.
package classicstreams
