package coordinator

// A group's restart recovery (migration_recovery.go keeps it on the
// group's executor): types only, so that the migration state
// (migration_state.go) holds it without depending on the operations.

// RecoveryJoin is a classic JoinGroup held by a restart recovery: Rerun runs
// it again from the start, unless its connection closed (Done).
type RecoveryJoin struct {
	Done  <-chan struct{}
	Rerun func()
}

// Gone reports whether the join's connection closed.
func (h RecoveryJoin) Gone() bool {
	select {
	case <-h.Done:
		return true
	default:
		return false
	}
}

// RestartRecovery is one group's restart recovery, read and changed only in
// the functions WithRecovery and ArmRecovery run on the group's executor.
type RestartRecovery struct {
	// Held are the group's held JoinGroups.
	Held []RecoveryJoin
	// Stale are the member ids its JoinGroups carried while it recovered:
	// given out by the lost state (or by the upstream before a takeover),
	// they mean nothing to the broker after a hand-back, which would answer
	// UNKNOWN_MEMBER_ID and make Kafka Streams drop its tasks.
	Stale map[string]bool
	// Leaving: the anchor is leaving for a hand-back; HandedBack: it left
	// and joins go upstream.
	Leaving, HandedBack bool
	Warned              bool
	timer               Timer
}

// stop stops rec's timer and returns its held joins, to run again (the
// group is going away).
func (rec *RestartRecovery) stop() []RecoveryJoin {
	if rec == nil {
		return nil
	}
	if rec.timer != nil {
		rec.timer.Stop()
	}
	return rec.Held
}
