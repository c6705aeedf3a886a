package coordinator

// MayServeClassic reports whether a classic group request (JoinGroup,
// SyncGroup, Heartbeat, LeaveGroup) of the group could be served here. It
// is false when the coordinator has no state and no queued work for the
// group, so the caller forwards the request upstream at once instead of
// sending it through the group's queue only to learn ErrClassicNotServed.
// It takes no group queue and allocates nothing; true only means "ask":
// the classic calls still answer ErrClassicNotServed for a group that is
// not a streams group. A group created right after a false answer races
// the request as if it had been answered ErrClassicNotServed.
func (c *Coordinator) MayServeClassic(groupID string) bool {
	c.mu.Lock()
	_, ok := c.queues[groupID]
	c.mu.Unlock()
	return ok
}
