// Package coordinator is streamshift's streams-group coordinator (KIP-1071), as
// Apache Kafka 4.4 implements it: it serves StreamsGroupHeartbeat (88) and
// StreamsGroupDescribe (89) for the groups the proxy owns.
//
// Every state change is a record mirroring Kafka's streams-group records
// (records.go). The in-memory state of a group is what replaying its records
// gives (replay.go); a response leaves only after the records it caused are
// appended to the group log (log.go). The work of one group is serialized, groups
// run in parallel, and no entry point blocks its caller (coordinator.go).
// Timers run on a Clock so tests run in virtual time.
//
// The sticky task assignor and the topology configuration are pure functions in
// the subpackages assignor and topology.
package coordinator
