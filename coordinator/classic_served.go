package coordinator

// MayServeClassic reports whether a classic group request (JoinGroup,
// SyncGroup, Heartbeat, LeaveGroup) of the group could be served here. It
// is false when the coordinator has no state and no queued work for the
// group (a queue kept only to count the group's classic requests in flight
// has neither), so the caller forwards the request upstream at once instead of
// sending it through the group's queue only to learn ErrClassicNotServed.
// It takes no group queue and allocates nothing; true only means "ask":
// the classic calls still answer ErrClassicNotServed for a group that is
// not a streams group. A group created right after a false answer races
// the request as if it had been answered ErrClassicNotServed.
func (c *Coordinator) MayServeClassic(groupID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.queues[groupID]
	if s == nil {
		return false
	}
	if s.group != nil {
		return true
	}
	// A queue kept only by the gate's count (migration_state.go) holds
	// nothing to serve: the group's classic requests in flight upstream.
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running || len(s.queue) > 0
}
