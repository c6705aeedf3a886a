package coordinator

import (
	"github.com/streamshift/streamshift/coordinator/streams"
)

// GroupSummary is what the admin RPCs need of an owned group: whether it is
// Empty and the topics its members consume (source and repartition-source
// topics, Kafka's StreamsGroup.isSubscribedToTopic).
type GroupSummary struct {
	State        streams.GroupState
	SourceTopics map[string]bool
}

// Summary reports a group the coordinator holds; ok is false when it holds
// none with this id.
func (c *Coordinator) Summary(groupID string) (sum GroupSummary, ok bool) {
	ch := make(chan GroupSummary, 1)
	found := make(chan bool, 1)
	c.run(groupID, func(s *groupQueue) {
		g := s.group
		if g == nil {
			found <- false
			return
		}
		topics := map[string]bool{}
		for t := range streams.SourceSubtopologies(g) {
			topics[t] = true
		}
		ch <- GroupSummary{State: g.State(), SourceTopics: topics}
		found <- true
	}, func(*streams.CoordError) { found <- false })
	if !<-found {
		return GroupSummary{}, false
	}
	return <-ch, true
}

// hasQueue reports whether the group has an executor here: it holds the
// group, or work for the group is queued. It does not wait. A queue kept
// only by migration state of a group it does not hold (what its classic
// requests showed upstream, a takeover's backoff: migration_state.go), with
// nothing running, queued, held or in flight, does not count: its work
// would only find no group, so its OffsetFetch and OffsetCommit go
// upstream without a queue hop, as before it was kept.
func (c *Coordinator) hasQueue(groupID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.queues[groupID]
	if s == nil {
		return false
	}
	if s.group != nil || s.gate.Load()&^(gateKept|gateRecovery) != 0 {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running || len(s.queue) > 0
}

// Owns reports whether the coordinator holds a streams group with this id.
// It waits for the group's queue (one crossing) unless the group has none.
func (c *Coordinator) Owns(groupID string) bool {
	if !c.hasQueue(groupID) {
		return false
	}
	ch := make(chan bool, 1)
	c.run(groupID, func(s *groupQueue) { ch <- s.group != nil }, func(*streams.CoordError) { ch <- false })
	return <-ch
}
