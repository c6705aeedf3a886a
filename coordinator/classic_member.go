package coordinator

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ClassicMemberMetadata is what a streams group keeps of a member that speaks
// the classic protocol (a Kafka Streams client with group.protocol=classic):
// Kafka's ClassicMemberMetadata of KIP-848, plus the versions of the Streams
// metadata the member sends, because its SyncGroup assignment must be
// written at the member's own version.
type ClassicMemberMetadata struct {
	SessionTimeoutMs int32
	// ConsumerProtocolVersion is the version of the member's
	// ConsumerProtocolSubscription; the assignment echoes it.
	ConsumerProtocolVersion int16
	// SubscriptionVersion and LatestSupportedVersion are the used and the
	// latest supported version of the member's SubscriptionInfo.
	SubscriptionVersion    int32
	LatestSupportedVersion int32
}

func (c *ClassicMemberMetadata) equal(o *ClassicMemberMetadata) bool {
	if c == nil || o == nil {
		return c == o
	}
	return *c == *o
}

// IsClassic reports whether the member speaks the classic protocol.
func (m *Member) IsClassic() bool { return m.Meta != nil && m.Meta.Classic != nil }

func classicChanged(old, v *MemberMetadataValue) bool {
	var a, b *ClassicMemberMetadata
	if old != nil {
		a = old.Classic
	}
	if v != nil {
		b = v.Classic
	}
	return !a.equal(b)
}

// classicMetadata stamps the classic metadata of the JoinGroup being served
// on the member's new metadata. A StreamsGroupHeartbeat naming a classic
// member is refused: a member never changes protocol under the same id.
func (ch *change) classicMetadata(m *Member, meta *MemberMetadataValue) (*MemberMetadataValue, error) {
	if ch.classic == nil {
		if m != nil && m.IsClassic() {
			return nil, errorf(kerr.UnknownMemberID, "Member %s of group %s uses the classic protocol.", m.ID, ch.g.ID)
		}
		return meta, nil
	}
	v := *meta // record values are shared with the log: copy
	c := *ch.classic
	v.Classic = &c
	// A classic member runs the group's topology; it never sends one.
	v.TopologyEpoch = ch.g.topologyEpoch()
	return &v, nil
}

// sessionTimeout is the member's own session timeout for a classic member
// (from its JoinGroup), the group's otherwise.
func (ch *change) sessionTimeout(memberID string) time.Duration {
	if m := ch.g.Members[memberID]; m != nil && m.IsClassic() {
		return time.Duration(m.Meta.Classic.SessionTimeoutMs) * time.Millisecond
	}
	return ch.cfg.SessionTimeout
}

// Timers of classic members, next to the session and rebalance timers:
// Kafka's sync timeout (a member that joined must SyncGroup within its
// rebalance timeout) and join timeout (a member told to rejoin must JoinGroup
// within its rebalance timeout).
const (
	classicSyncTimer timerKind = 32 + iota
	classicJoinTimer
)

func classicSyncTimerKey(memberID string) timerKey { return timerKey{classicSyncTimer, memberID} }
func classicJoinTimerKey(memberID string) timerKey { return timerKey{classicJoinTimer, memberID} }

// Why a classic member's timers fence it, in Kafka's words.
const (
	classicSyncTimeoutReason = "the member failed to sync within timeout"
	classicJoinTimeoutReason = "the classic member failed to join within the rebalance timeout"
)

// scheduleClassicTimeout fences the member when the timer fires at the same
// member epoch and still holds (nil: always); a member that moved on in the
// meantime is left alone. reason is the fencing's, for the log.
func (ch *change) scheduleClassicTimeout(key timerKey, m *Member, reason string, still func(*Group, *Member) bool) {
	id, epoch := m.ID, m.MemberEpoch()
	ch.schedule(key, rebalanceTimeout(m), func(f *change) {
		cur := f.g.Members[id]
		if cur != nil && cur.MemberEpoch() == epoch && (still == nil || still(f.g, cur)) {
			f.fenceClassic(cur, reason)
		}
	})
}

// fenceClassic fences a classic member (reason as fenceMember's).
func (ch *change) fenceClassic(m *Member, reason string) {
	ch.logFenced(m, reason)
	ch.removeClassic(m, bumpMemberFenced)
}

// removeClassic removes a classic member and its classic timers.
func (ch *change) removeClassic(m *Member, why string) {
	ch.removeMember(m, why)
	ch.cancel(classicSyncTimerKey(m.ID))
	ch.cancel(classicJoinTimerKey(m.ID))
}
