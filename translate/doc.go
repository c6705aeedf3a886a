// Package translate serves classic Kafka Streams members (clients with
// group.protocol=classic, whose StreamsPartitionAssignor joins with the
// "stream" protocol) whose group is a streams group held by the proxy's
// coordinator, as Kafka's KIP-848 coordinator serves classic consumers of a
// consumer group.
//
// It is the classic wire only. One file per Kafka API, the only one of its
// key in the project: 11_join_group.go, 12_heartbeat.go, 13_leave_group.go,
// 14_sync_group.go (route/classic.go routes the four alike to them, with the
// migration on); translator.go holds
// the Translator and its pending member ids. The group semantics live in
// the coordinator (coordinator/classic_*.go): a classic JoinGroup is a
// streams heartbeat of the member; SyncGroup returns its current
// assignment. This package decodes the "stream" protocol metadata
// (classicstreams), gives out member ids, checks the protocol, and hands
// back what is not a served streams group, to go upstream unchanged.
// Taking a group over and handing it back are package migration's; the
// translator only tells a migration.HandBack of the Heartbeats it answers
// and hands it the JoinGroups a hand-back's barrier holds (HandBack).
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
//   - Offset commits of classic members are validated by the coordinator
//     (ValidateClassicOffsetCommit, called by route/commit.go): the
//     generation is the member epoch.
//   - Shutdown: SubscriptionInfo errorCode 4 is ShutdownApplication; the
//     group's shutdown request reaches classic members as errCode 4.
//   - Versions: each member is answered at its used version with commonly
//     supported = min(its latest, 11); a member above 11 gets an empty v11
//     assignment and re-subscribes at 11.
//
// Pending member ids run on the coordinator's Clock (Coordinator embeds
// it), as the members' sessions do.
package translate
