package streams

import "time"

// Survivors listening for a successor, beyond Kafka 4.4 (issue #28,
// docs/fast-roll.md §12). In a step back of a rolling migration (streams →
// classic) a 4.4 streams instance leaves on close (epoch -1): the others
// take its tasks at their next heartbeat, and its classic successor joins a
// few seconds later (a JVM start) with the same process id. Its target then
// takes its share back from them, but a stable streams member learns that
// only at its next regular heartbeat, up to streams.heartbeat.interval.ms
// (5 s) after the successor joined, while the successor waits (its
// JoinGroup held, classic_join.go). So while a successor is expected,
// the members are answered the short reconciliation interval: they learn of
// the successor's target, and revoke, within that interval of its join.
//
// A successor is expected after a streams member left with epoch -1 in a
// group that is migrating: it has a classic member, or it was taken over
// from a live classic group (a migration ends in a hand-back). The watch
// ends at the next member's join (from then on the members that must revoke
// are reconciling, and answered the short interval for that), or after
// SuccessorWatch. It costs only heartbeats; nothing moves. Groups that are
// not migrating keep Kafka's behaviour, and so does every group when both
// intervals are equal.

// SuccessorWatch is how long a departed member's successor is expected: a
// JVM start, 2-5 s on an idle host and 10-40 s seen at load 40-80 (the
// group's session timeout, 10 s in the e2e tests, ran out first). At the
// default 250 ms that is at most 240 extra heartbeats per member and step.
const SuccessorWatch = time.Minute

// expectSuccessor starts the watch when m, a streams member, leaves with
// epoch -1 a migrating group.
func (ch *Change) expectSuccessor(m *Member) {
	g := ch.Group
	if m.IsClassic() || !migrating(g) {
		return
	}
	g.Mem.successorUntil = ch.Now.Add(SuccessorWatch)
}

// successorJoined ends the watch: member joined. If a successor was
// expected, it is that successor (SuccessorJoin).
func (ch *Change) successorJoined(member string) {
	g := ch.Group
	if g.awaitingSuccessor(ch.Now) {
		g.Mem.successor = member
	}
	g.Mem.successorUntil = time.Time{}
}

// SuccessorJoin: is member the first to join since a streams member left
// the migrating group, while its successor was expected? Its classic
// JoinGroup is the one held for its tasks (classic_join.go).
func SuccessorJoin(g *Group, member string) bool {
	return g != nil && g.Mem.successor != "" && g.Mem.successor == member
}

// awaitingSuccessor: is a successor expected at now?
func (g *Group) awaitingSuccessor(now time.Time) bool {
	return now.Before(g.Mem.successorUntil)
}

// migrating: the group has a classic member, or was taken over from a live
// classic group.
func migrating(g *Group) bool {
	if g.Ownership != nil && g.Ownership.Source == OwnershipTakeover {
		return true
	}
	for _, m := range g.Members {
		if m.IsClassic() {
			return true
		}
	}
	return false
}
