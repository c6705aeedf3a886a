package streams

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/streamshift/streamshift/coordinator/streams/topology"
)

// configureTopology returns the group's configured topology, recomputing it
// when the topology or the metadata image changed, and starts the creation
// of missing internal topics. It also returns the metadata hash.
func (ch *Change) configureTopology(topo *topology.Topology) (*configuredTopology, uint64, error) {
	g := ch.Group
	img := ch.Image
	mem := &g.Mem
	if mem.configured == nil || mem.configuredFor != topo || mem.configuredVersion != img.Version() {
		mem.configured = &configuredTopology{ConfiguredTopology: ch.Configure(*topo, imagePartitions(img))}
		mem.configuredFor = topo
		mem.configuredVersion = img.Version()
		mem.configuredHash = MetadataHash(img, requiredTopics(topo))
		if !mem.configured.IsReady() {
			ch.requestRefresh(requiredTopics(topo))
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

// createInternalTopics asks the runtime to create the missing internal
// topics, skipping those already being created (as Kafka does on every
// heartbeat that finds them missing); topicsCreated takes the result.
func (ch *Change) createInternalTopics(topics []topology.TopicToCreate) {
	g := ch.Group
	if !ch.CanCreateTopics {
		return
	}
	if g.Mem.creatingTopics == nil {
		g.Mem.creatingTopics = map[string]bool{}
	}
	var todo []CreatableTopic
	for _, t := range topics {
		if !g.Mem.creatingTopics[t.Name] {
			g.Mem.creatingTopics[t.Name] = true
			ct := CreatableTopic{Name: t.Name, Partitions: t.Partitions, ReplicationFactor: t.ReplicationFactor}
			for _, c := range t.Configs {
				ct.Configs = append(ct.Configs, KeyValue{Key: c.Key, Value: c.Value})
			}
			todo = append(todo, ct)
		}
	}
	if len(todo) > 0 {
		ch.Topics = append(ch.Topics, todo)
	}
}

// TopicsCreated is the result of creating the topics names: they are no
// longer being created, and the errors of those that failed are reported
// for two heartbeat intervals.
func TopicsCreated(g *Group, names []string, failed map[string]error, now time.Time, heartbeatInterval time.Duration) {
	mem := &g.Mem
	for _, n := range names {
		delete(mem.creatingTopics, n)
		if err := failed[n]; err != nil {
			if mem.topicCreationErrors == nil {
				mem.topicCreationErrors = map[string]topicCreationError{}
			}
			mem.topicCreationErrors[n] = topicCreationError{Msg: err.Error(), until: now.Add(2 * heartbeatInterval)}
		}
	}
}

// configurationDetail is the status detail of a topology that is not ready,
// with the topic creation errors of the last two heartbeat intervals.
func (ch *Change) configurationDetail(c *configuredTopology) string {
	detail := c.Err.Message
	if c.Status() != StatusMissingInternalTopics {
		return detail
	}
	var failed []string
	for name, e := range ch.Group.Mem.topicCreationErrors {
		if ch.Now.After(e.until) {
			delete(ch.Group.Mem.topicCreationErrors, name)
			continue
		}
		failed = append(failed, fmt.Sprintf("%s (%s)", name, e.Msg))
	}
	if len(failed) > 0 {
		sort.Strings(failed)
		detail += "; Creation failed: " + strings.Join(failed, ", ")
	}
	return detail
}
