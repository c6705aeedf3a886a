package coordinator

import (
	"sync/atomic"
	"time"
)

// The observed classic members of a group (migration_observed.go keeps
// them on the group's executor): types only, so that the migration state
// (migration_state.go) holds them without depending on the operations.

// ObservedClassicMember is what the forwarded requests showed of a member.
type ObservedClassicMember struct {
	SessionMs, RebalanceMs int32
	Generation             int32
	HaveGeneration         bool
	// LastHeartbeat: when the upstream last renewed its session (zero if
	// unknown).
	LastHeartbeat time.Time
	// Conn and Closed: the connection of its latest JoinGroup, SyncGroup
	// or Heartbeat; Closed nil if unknown. ClosedAt: when it closed.
	Conn     uint64
	Closed   <-chan struct{}
	ClosedAt func() time.Time
	// seen is its latest observation of any kind (armObservedExpiry).
	seen time.Time
}

// defaultObservedSessionMs is Kafka Streams' session timeout, for a member
// whose JoinGroup was not seen.
const defaultObservedSessionMs = 45000

// expiresAt is when the member's observation is dropped.
func (m *ObservedClassicMember) expiresAt() time.Time {
	session := m.SessionMs
	if session <= 0 {
		session = defaultObservedSessionMs
	}
	return m.seen.Add(2 * time.Duration(session) * time.Millisecond)
}

// observedGroup is a group's observed members and the timer that drops
// those gone quiet.
type observedGroup struct {
	members map[string]*ObservedClassicMember
	expiry  Timer
}

// rejoinWatch is a running takeover's watch for a held JoinGroup or
// SyncGroup (WatchClassicRejoin). Whether it fired or was stopped is one
// CAS: exactly one of the two wins.
type rejoinWatch struct {
	state atomic.Int32 // 0 armed, 1 fired, 2 stopped
	f     func()
}

func (og *observedGroup) member(id string) *ObservedClassicMember {
	if og == nil {
		return nil
	}
	return og.members[id]
}

// stop stops og's timer.
func (og *observedGroup) stop() {
	if og != nil && og.expiry != nil {
		og.expiry.Stop()
	}
}
