// Package migration moves a running Kafka Streams group between the
// classic protocol (the upstream's group) and the streams protocol (served
// here), one instance at a time, as KIP-1071 specifies. Apache Kafka only
// migrates empty groups.
//
// The files:
//
//   - policy.go: migration.policy, as Kafka's group.consumer.migration.policy.
//   - the per-group gate and drain, the pacing of takeover attempts, the
//     takeover in progress, the hand-back's run (its held joins, its
//     checks) and its last steps (the grace streams joins wait out), what
//     the forwarded classic requests showed and the restart recovery are
//     the group's migration state on its coordinator executor
//     (coordinator/migration_state.go, takeover_pacing.go,
//     migration_takeover.go, migration_handback.go, migration_observed.go,
//     migration_recovery.go); takeover.go's coordinatorGate is the
//     takeover's Holder over the gate.
//   - observer.go: ClassicObserver turns the forwarded classic requests and
//     their answers into observations for the group's executor (no queue
//     hop for an idle one), and builds the classic group a takeover reads
//     (ClassicGroupStateOf).
//   - trigger.go: the first streams join of a live classic group starts a
//     takeover (MaybeTakeOver); a join waits out a hand-back's last steps
//     (WaitHandBack); the ownership claim's takeover hook.
//   - takeover.go: the takeover driver.
//   - handback.go: the hand-back driver.
//   - upstream.go: describe, fence and the anchor, through interfaces
//     (UpstreamGroups: upstream.Groups; Anchors: package route's).
//   - recovery.go: the restart recovery's decisions (its state is the
//     group's, on its executor).
//   - migration.go: Migration wires them; route calls it.
//
// The package imports no proxy, route, upstream, kgo or kadm
// (imports_test.go). It builds the translator (package translate) and
// drives it: a hand-back re-runs held JoinGroups through it. translate does
// not import migration.
//
// Every timer and "now" of the migration is on the coordinator's Clock: the
// observer's heartbeat times, the drain timeout, the hand-back's check
// interval, answer timeout and grace, and the recovery window. A
// coordinator.ManualClock runs all of it in virtual time. Only the anchor
// member heartbeats upstream on a ticker of its own.
//
// # Takeover (classic → streams)
//
// The first StreamsGroupHeartbeat (epoch 0) of a group that is a live
// classic group upstream starts it, if the policy allows the upgrade. The
// state it builds is the coordinator's (TakeOverClassicGroup,
// AbandonTakeOver).
//
//  1. Gate: the group's classic requests (JoinGroup, SyncGroup, Heartbeat,
//     LeaveGroup, OffsetCommit, TxnOffsetCommit, OffsetFetch) are held from
//     now on, in arrival order. The streams join waits too.
//  2. Drain: wait until every request of the group already forwarded has
//     its answer. A request counts from the moment it passes the gate. A
//     commit in flight completes upstream with the classic generation,
//     which stays valid after the takeover. The drain has a timeout: a
//     client that went away never reports its answer.
//  3. Read: DescribeGroups upstream. The group must be Stable, with protocol
//     type "consumer" and protocol "stream". A rebalancing group gives up
//     for now: the gate is released and the streams member gets
//     COORDINATOR_LOAD_IN_PROGRESS, which its client retries. DescribeGroups
//     has no timeouts: they come from the member's last JoinGroup seen
//     passing through (the observer), else Kafka Streams' defaults (45 s,
//     300 s). The observer also keeps the generation and when the upstream
//     last renewed each member's session.
//  4. Build: TakeOverClassicGroup, all or nothing. Each member's session
//     runs on from its last upstream heartbeat. A member whose session ran
//     out upstream is not carried over: its tasks are free at once.
//  5. Fence upstream: one LeaveGroup (v3+) naming every classic member.
//     Then the anchor joins, so the group is kept and commits go upstream
//     under the anchor's identity. If either fails, the streams group is
//     deleted, the gate released, and the streams member retries.
//  6. Release: the streams join gets its answer, its session renewed from
//     then (the time its heartbeat was held is not its to lose); the held
//     requests run in order and find the group served here.
//
// The hold lasts at most takeoverHoldLimit (5 s, half of Kafka Streams'
// exactly-once transaction.timeout.ms), the drain at most half of it.
// Past the limit a takeover not yet built (steps 1 to 4) gives up as a
// rebalancing group does; a built one releases and answers (step 6) and
// finishes step 5 behind: meanwhile the classic members' TxnOffsetCommits
// go upstream without a member (route's memberNone, which Kafka accepts
// for a transactional commit), their generation checked here.
//
// A JoinGroup that arrives during the gate is held, then served by the
// streams group: the member keeps its generation. A JoinGroup already
// forwarded is drained in step 2; if it left the upstream group
// PreparingRebalance, step 3 gives up and the next streams join tries
// again. Classic members are moved only with Heartbeat
// REBALANCE_IN_PROGRESS: ILLEGAL_GENERATION and UNKNOWN_MEMBER_ID make
// Kafka Streams close its tasks dirty.
//
// # Hand-back (streams → classic)
//
// The last streams-protocol member left, classic members remain, and the
// policy allows downgrade. The first classic Heartbeat that finds the group
// classic-only starts it (HandBack.AfterHeartbeat). The barrier is the
// coordinator's (BeginHandBack, AbortHandBack, FinishHandBack).
//
//  1. Barrier: a new group epoch with an empty target, so every classic
//     Heartbeat gets REBALANCE_IN_PROGRESS and every member's next
//     JoinGroup/SyncGroup takes all its tasks away (a cooperative
//     revocation: Kafka Streams commits and closes them clean). Its next
//     JoinGroup, owning nothing, is held, its session suspended, a hold
//     timer armed. The barrier is complete when every classic member is
//     held owning nothing, or gone: no member can enter the upstream group
//     still running a task (an open transaction there would commit as a
//     member of a generation that gave the task to another member too).
//     A newcomer's JoinGroup is held too, and goes upstream without the
//     member id it was given here. Nothing polls: the coordinator tells the
//     hand-back when the barrier ends (BeginHandBack's onBarrier).
//  2. A streams member joining during the barrier aborts it: the held
//     JoinGroups are served by the streams group.
//  3. The anchor leaves the upstream group; the streams group is deleted
//     here (tombstones).
//  4. Every held JoinGroup goes upstream with an empty member id, on the
//     connection it came on (the member's own principal). The broker
//     answers MEMBER_ID_REQUIRED with an id of its own; Kafka Streams
//     rejoins with it, and the broker's group starts every task from its
//     committed offsets.
//  5. If the anchor cannot leave, the held JoinGroups are served here and
//     the hand-back is tried again later.
//
// From the anchor's leave until the forwarded JoinGroups are answered (and
// a short grace), the group is neither here nor formed upstream: a streams
// join of it waits (WaitHandBack, before the join is served or takes over). Otherwise it would start a takeover
// while the classic members still hold their tasks.
//
// # Restart recovery
//
// A streamshift restarted without the durable log holds no state of its
// groups, while their upstream groups still hold its anchor. A classic
// member's rejoin then gets INCONSISTENT_GROUP_PROTOCOL upstream, fatal to
// Kafka Streams. recovery.go turns it into COORDINATOR_LOAD_IN_PROGRESS and
// holds the group's classic joins until a streams member brings the
// topology back, or, after the recovery window and if the policy allows a
// downgrade, hands the group back.
package migration
