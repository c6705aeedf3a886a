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

// Owns reports whether the coordinator holds a streams group with this id.
func (c *Coordinator) Owns(groupID string) bool {
	c.mu.Lock()
	_, ok := c.queues[groupID]
	c.mu.Unlock()
	if !ok {
		return false
	}
	ch := make(chan bool, 1)
	c.run(groupID, func(s *groupQueue) { ch <- s.group != nil }, func(*streams.CoordError) { ch <- false })
	return <-ch
}
