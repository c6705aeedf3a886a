// Package translate serves classic Kafka Streams members (clients with
// group.protocol=classic, whose StreamsPartitionAssignor joins with the
// "stream" protocol) whose group is a streams group held by the proxy's
// coordinator: KIP-1071's online migration, mirroring what Kafka's KIP-848
// coordinator does for consumer groups.
//
// One file per Kafka API, as elsewhere: 11_join_group.go, 12_heartbeat.go,
// 13_leave_group.go, 14_sync_group.go; commit.go validates OffsetCommit and
// TxnOffsetCommit; policy.go is migration.policy. The group semantics live in
// the coordinator (coordinator/classic_*.go): a classic JoinGroup is a
// streams heartbeat of the member; SyncGroup returns its current assignment.
// This package does the wire: decoding the "stream" protocol metadata
// (classicstreams), member ids, the protocol checks, and forwarding what is
// not a served streams group upstream, unchanged.
//
// # The classic cycle mapped onto the streams protocol
//
//   - JoinGroup = heartbeat with owned tasks: active tasks from the
//     ConsumerProtocol ownedPartitions (plus running actives of the offset
//     sums); standbys are what the group last gave the member. The answer is
//     leaderless (leader "", no members: the member never runs the Streams
//     assignor) with generation = member epoch and protocol "stream".
//   - SyncGroup = the current assignment, written at the member's own
//     SubscriptionInfo version (classicstreams.BuildSyncAssignment: aligned
//     active list, standbys with warm-ups, IQ host maps of all endpoints,
//     errCode 4 while a shutdown is requested). Tasks pending revocation are
//     left out, which is what makes a cooperative member revoke them and
//     rejoin at once; its next JoinGroup lists fewer partitions and the
//     reconciliation moves on (revoke before assign).
//   - Heartbeat = session, and REBALANCE_IN_PROGRESS when a JoinGroup would
//     change something: the group epoch moved past the member, it has tasks
//     to revoke, or tasks it waits for were released. A member told so must
//     rejoin within its rebalance timeout; one that joined must SyncGroup
//     within it; its own session timeout applies.
//   - Members are moved only by Heartbeat REBALANCE_IN_PROGRESS. The
//     generation never changes under a member except through its own
//     JoinGroup, so its commits stay valid; ILLEGAL_GENERATION and
//     UNKNOWN_MEMBER_ID (which make Kafka Streams close its tasks dirty) are
//     kept for real fencing, and OffsetCommit never gets
//     REBALANCE_IN_PROGRESS (it kills the Streams thread).
//   - Shutdown: SubscriptionInfo errorCode 4 is ShutdownApplication; the
//     group's shutdown request reaches classic members as errCode 4.
//   - Versions: each member is answered at its used version with commonly
//     supported = min(its latest, 11); a member above 11 gets an empty v11
//     assignment and re-subscribes at 11.
//
// # Takeover (classic → streams)
//
// Takeover (takeover_driver.go) runs it behind three interfaces the proxy
// implements (Gate, TakeoverUpstream) or already has (the coordinator's
// TakeOverClassicGroup / AbandonTakeOver); ClassicGroupStateOf
// (takeover.go) reads DescribeGroups with what a ClassicObserver saw pass
// through. Per group, when the first StreamsGroupHeartbeat (epoch 0) of a
// group that is classic upstream arrives:
//
//  1. Gate: from now on, the group's classic requests (JoinGroup, SyncGroup,
//     Heartbeat, LeaveGroup, OffsetCommit, TxnOffsetCommit, OffsetFetch) that
//     arrive are held in arrival order; the streams heartbeat is held too.
//  2. Drain: wait until every request of the group already forwarded
//     upstream has its response (a per-group in-flight counter kept by the
//     forwarding path). A commit in flight completes upstream with the
//     classic generation, which stays valid after the takeover.
//  3. Read: DescribeGroups upstream. The group must be Stable or
//     CompletingRebalance with protocol type "consumer" and protocol
//     "stream"; otherwise (PreparingRebalance: a classic rebalance is
//     running upstream) release the gate, forward what was held and answer
//     the streams member with a retriable error (COORDINATOR_LOAD_IN_PROGRESS
//     is retried by the Streams client), to try again on its next join.
//     Per member: memberId, instanceId, clientId, host, metadata bytes
//     (ConsumerProtocolSubscription + SubscriptionInfo) and assignment bytes
//     (ConsumerProtocolAssignment + AssignmentInfo). Session and rebalance
//     timeouts are not in DescribeGroups: take them from the member's last
//     JoinGroup seen passing through (a per-member cache filled by the
//     forwarding path), else Kafka Streams' defaults (45 s, 300 s). The
//     same cache keeps when the upstream last renewed each member's
//     session (an accepted Heartbeat, JoinGroup, SyncGroup or OffsetCommit,
//     a Heartbeat answered REBALANCE_IN_PROGRESS, or a request held by the
//     gate), on the coordinator's clock.
//     Generation: the last JoinGroup/SyncGroup response seen for the group,
//     checked against the members' ConsumerProtocolSubscription
//     generationId; if they disagree, give up as above.
//  4. Build: coordinator.TakeOverClassicGroup(state, heldStreamsJoin). It is
//     all-or-nothing: on error nothing is written, give up as above. Each
//     carried member's session runs on from its last upstream heartbeat,
//     not from the takeover: an instance that stopped just before it is
//     fenced when the broker would have fenced it, and one whose session
//     already ran out is not carried over (its tasks are free at once).
//  5. Fence upstream: one batched LeaveGroup (v3+) naming every classic
//     member (member id and instance id), so the upstream group is empty of
//     them; their sessions now live in the proxy. Then join the anchor
//     (anchor.Manager) so the group is kept and commits can be forwarded
//     under the anchor's identity. If the LeaveGroup or the anchor join
//     fails: delete the streams group (coordinator.DeleteGroup with its
//     tombstones), release the gate by forwarding what was held, and answer
//     the streams member with a retriable error. Members that were fenced
//     upstream rejoin upstream on UNKNOWN_MEMBER_ID at worst; that is the
//     only failure path that can close tasks dirty, and only after an
//     upstream error.
//  6. Release: answer the streams heartbeat with what TakeOverClassicGroup
//     answered; run the held classic requests through this package in order
//     (held commits are validated with ValidateOffsetCommit and forwarded
//     under the anchor).
//
// A classic rebalance racing the takeover: a JoinGroup that arrives during
// the gate is held and then served by the streams group (the member keeps
// its generation; its JoinGroup is answered at its member epoch). A
// JoinGroup already forwarded is drained in step 2; if it left the upstream
// group PreparingRebalance, step 3 gives up and the next streams join tries
// again once the classic round is over.
//
// # Hand-back (streams → classic)
//
// handback.go runs it behind Upstream (anchor leave, end of a hand-back) and
// each held JoinGroup's own Forward, started by
// the first classic Heartbeat that finds the group classic-only; the
// barrier itself is the coordinator's (BeginHandBack, AbortHandBack,
// FinishHandBack). When the last streams-protocol member
// leaves or is fenced and classic members remain, and the policy allows
// downgrade:
//
//  1. Barrier: every classic Heartbeat of the group gets
//     REBALANCE_IN_PROGRESS; every classic JoinGroup is held (not answered),
//     its session timer suspended and a hold timer armed at twice its
//     rebalance timeout. SyncGroup of a held member is not possible (it is
//     joining). The barrier is complete when every classic member is held
//     or gone (session or join timeout fences it as usual). The JoinGroup
//     of an instance that is not a member yet is held too, outside the
//     barrier, and goes upstream with the others (without the member id it
//     was given here, which the broker would answer UNKNOWN_MEMBER_ID).
//     Nothing polls the barrier: the coordinator tells the hand-back once
//     it ends (BeginHandBack's onBarrier), from the change that ends it (a
//     held JoinGroup, a leave, a timer fencing a member, a streams join),
//     with no request needed.
//  2. A streams-protocol member that joins during the barrier aborts it:
//     the held JoinGroups are served by the streams group (they get their
//     member epoch as generation), and the group stays a streams group.
//  3. The anchor leaves the upstream group (its LeaveGroup), then the
//     streams group is deleted here (tombstones).
//  4. Every held JoinGroup is forwarded upstream with an empty member id, on
//     the connection it arrived on (so under the member's own principal and
//     client id): the broker answers MEMBER_ID_REQUIRED with an id of its
//     own ("<client.id>-<uuid>"), which Kafka Streams handles by rejoining
//     with it, keeping its tasks and generation. Once all are answered
//     (or their longest rebalance timeout and a slack passed)
//     Upstream.HandBackDone lets streams joins of the group through again
//     (after a short grace). The
//     upstream classic group then forms with a Streams leader whose
//     assignor never gives a partition another member still reports owning
//     (the two-phase rule), so no task is active twice.
//  5. If the anchor cannot leave, answer the held JoinGroups through the
//     streams group (abort) and retry the hand-back later.
//
// While steps 3-4 run, the group's StreamsGroupHeartbeats must be held at
// the proxy gate too, and released only once the forwarded JoinGroups have
// their answers: a streams join in between would find no group here and an
// empty group upstream, and start a takeover while the classic members
// still hold their tasks.
//
// Every timer and "now" of the migration (the members' sessions and holds,
// pending member ids, the hand-back's answer timeout, the observer's
// heartbeat times, and route's drain timeout, hand-back grace and restart
// recovery window) is on the coordinator's Clock (Coordinator embeds it),
// so a coordinator.ManualClock runs all of it in virtual time; only the
// anchor member heartbeats upstream on a ticker of its own.
//
// # What package route provides
//
// Package route (classic.go, migration_*.go) provides the per-group gate
// with its in-flight counter (Gate; a request counts from the moment it
// passes the gate), the forwarding path feeding a ClassicObserver
// (JoinGroup responses; SyncGroup, Heartbeat and OffsetCommit generations
// the upstream accepted), Upstream and TakeoverUpstream over the
// control-plane client and the anchor manager, and the routing:
// JoinGroup/SyncGroup/Heartbeat/LeaveGroup of a group the coordinator
// holds state for (coordinator.MayServeClassic, a map lookup) to
// Translator.Handle (which forwards what it does not serve), of any other
// group straight upstream on the client's connection; OffsetCommit and
// TxnOffsetCommit of a served group to
// coordinator.ValidateClassicOffsetCommit (route/commit.go), then upstream
// under the anchor's identity; the first streams join of a group classic
// upstream to Takeover.Run.
package translate
