package coordinator

import (
	"github.com/streamshift/streamshift/coordinator/streams"
)

// Internal topics are I/O an operation returns, as Kafka's group
// coordinator returns StreamsGroupHeartbeatResult.creatableTopics: the
// operations a client's request runs (a streams heartbeat, a takeover, a
// classic join or sync) give the topics they found missing to their
// caller, which authorizes the client (CREATE) and creates them, then
// reports the outcome with TopicsCreated. Until then the group counts them
// as being created and does not return them again (streams' creatingTopics:
// one creation in flight per topic and group).

// TopicsCreated reports the creation of internal topics an operation of
// the group returned: they are no longer being created, and the errors of
// those in failed are reported in the group's status for two heartbeat
// intervals. A creation not attempted (the client may not CREATE them, or
// its authorization got no answer) is reported with no failure: a later
// heartbeat that still finds them missing returns them again, as Kafka's
// does. It does not block: the group's queue takes the result.
func (c *Coordinator) TopicsCreated(groupID string, names []string, failed map[string]error) {
	if len(names) == 0 {
		return
	}
	if c.timings != nil {
		c.timings.TopicsCreated(len(names)-len(failed), len(failed))
	}
	c.metadata.RequestRefresh(names)
	c.run(groupID, func(s *groupQueue) {
		if s.group == nil {
			return
		}
		streams.TopicsCreated(s.group, names, failed, c.clock.Now(), c.groupConfig(groupID).HeartbeatInterval)
	}, nil) // a result for a closed or unloaded group is moot
}

// TopicNames are the names of topics.
func TopicNames(topics []streams.CreatableTopic) []string {
	names := make([]string, len(topics))
	for i, t := range topics {
		names[i] = t.Name
	}
	return names
}
