package coordinator

import (
	"fmt"
	"sort"
	"strings"

	"github.com/streamshift/streamshift/coordinator/streams/topology"
)

// configureTopology returns the group's configured topology, recomputing it
// when the topology or the metadata image changed, and starts the creation
// of missing internal topics. It also returns the metadata hash.
func (ch *change) configureTopology(topo *topology.Topology) (*configuredTopology, uint64, error) {
	g := ch.g
	img := ch.c.metadata.Image()
	mem := &g.mem
	if mem.configured == nil || mem.configuredFor != topo || mem.configuredVersion != img.Version() {
		mem.configured = &configuredTopology{ch.c.configure(*topo, imagePartitions(img))}
		mem.configuredFor = topo
		mem.configuredVersion = img.Version()
		mem.configuredHash = metadataHash(img, requiredTopics(topo))
		if !mem.configured.ready() {
			ch.c.metadata.RequestRefresh(requiredTopics(topo))
		}
	}
	cfgd := mem.configured
	if err := cfgd.failure(); err != nil {
		return nil, 0, err
	}
	if len(cfgd.TopicsToCreate) > 0 {
		ch.createInternalTopics(cfgd.TopicsToCreate)
	}
	return cfgd, mem.configuredHash, nil
}

// createInternalTopics asks the topic creator for the missing internal
// topics, skipping those already being created (as Kafka does on every
// heartbeat that finds them missing).
func (ch *change) createInternalTopics(topics []topology.TopicToCreate) {
	c, g := ch.c, ch.g
	if c.creator == nil {
		return
	}
	if g.mem.creatingTopics == nil {
		g.mem.creatingTopics = map[string]bool{}
	}
	var todo []CreatableTopic
	for _, t := range topics {
		if !g.mem.creatingTopics[t.Name] {
			g.mem.creatingTopics[t.Name] = true
			ct := CreatableTopic{Name: t.Name, Partitions: t.Partitions, ReplicationFactor: t.ReplicationFactor}
			for _, c := range t.Configs {
				ct.Configs = append(ct.Configs, KeyValue{c.Key, c.Value})
			}
			todo = append(todo, ct)
		}
	}
	if len(todo) == 0 {
		return
	}
	groupID := g.ID
	names := make([]string, len(todo))
	for i, t := range todo {
		names[i] = t.Name
	}
	c.creator.CreateTopics(todo, func(failed map[string]error) {
		c.metadata.RequestRefresh(names)
		c.run(groupID, func(s *shard) {
			if s.group == nil {
				return
			}
			mem := &s.group.mem
			now := c.clock.Now()
			hb := c.groupConfig(groupID).HeartbeatInterval
			for _, n := range names {
				delete(mem.creatingTopics, n)
				if err := failed[n]; err != nil {
					if mem.topicCreationErrors == nil {
						mem.topicCreationErrors = map[string]topicCreationError{}
					}
					mem.topicCreationErrors[n] = topicCreationError{msg: err.Error(), until: now.Add(2 * hb)}
				}
			}
		}, nil) // a result for a closed or unloaded group is moot
	})
}

// configurationDetail is the status detail of a topology that is not ready,
// with the topic creation errors of the last two heartbeat intervals.
func (ch *change) configurationDetail(c *configuredTopology) string {
	detail := c.Err.Message
	if c.status() != StatusMissingInternalTopics {
		return detail
	}
	var failed []string
	for name, e := range ch.g.mem.topicCreationErrors {
		if ch.now.After(e.until) {
			delete(ch.g.mem.topicCreationErrors, name)
			continue
		}
		failed = append(failed, fmt.Sprintf("%s (%s)", name, e.msg))
	}
	if len(failed) > 0 {
		sort.Strings(failed)
		detail += "; Creation failed: " + strings.Join(failed, ", ")
	}
	return detail
}
