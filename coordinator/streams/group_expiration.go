package streams

import "time"

// Kafka deletes an Empty group once its committed offsets have expired:
// every offsets.retention.check.interval.ms (10 minutes by default) its
// cleanupGroupMetadata expires offsets and tombstones each Empty group left
// without any (GroupMetadataManager.maybeDeleteGroup). A streams group's
// offsets live upstream here, under its anchor member, which keeps the
// upstream group from looking Empty; so streamshift drops an Empty group's
// state one check interval after it became Empty (the runtime arms
// GroupExpirationTimerKey while Expirable holds), and its anchor then
// leaves the upstream group, whose own retention rule (KIP-211) then
// applies to the offsets, as it would to a Kafka streams group's. A member
// joining later starts a fresh group.

// GroupExpirationTimerKey is the timer of an Empty group's expiration.
var GroupExpirationTimerKey = TimerKey{kind: groupExpirationTimer}

// Expirable reports whether a group may expire: it has no member (no
// streams member, no classic member of a migration, no static member
// waiting for its instance) and no hand-back runs.
func Expirable(g *Group) bool {
	return g != nil && len(g.Members) == 0 && g.Mem.HandBack == nil
}

// ExpireGroup is the operation of the expiration timer: the tombstones of a
// group still Expirable (Deleted set), or nothing.
func (ch *Change) ExpireGroup(emptyFor time.Duration) {
	g := ch.Group
	if !Expirable(g) {
		return
	}
	ch.logAt(LevelInfo).Int32("epoch", g.GroupEpoch).Dur("empty_for", emptyFor).
		Msgf("[GroupId %s] Deleting the streams group: it has been Empty for %v (offsets.retention.check.interval.ms); its offsets stay upstream, under the upstream group's retention.", ch.GroupID, emptyFor)
	ch.TombstoneGroup(g.Ownership != nil)
	ch.Deleted = true
	ch.Commit()
}
