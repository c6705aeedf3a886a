package upstream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// TopicCreator is the coordinator's TopicCreator on the upstream cluster: it
// creates internal topics with CreateTopics, as a 4.x broker does for streams
// groups, and then reads their metadata at once so the group's next
// heartbeat finds them.
type TopicCreator struct {
	cl      kmsg.Requestor
	meta    *Metadata
	timeout time.Duration
}

// NewTopicCreator returns a creator sending through cl (a
// *kgo.Client routes CreateTopics to the controller) that adds the created
// topics to meta, if not nil; each creation is bounded by timeout (default
// 30s).
func NewTopicCreator(cl kmsg.Requestor, meta *Metadata, timeout time.Duration) *TopicCreator {
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	return &TopicCreator{cl: cl, meta: meta, timeout: timeout}
}

// CreateTopics sends one CreateTopics request for all topics (a heartbeat's
// missing topics are created together, as Kafka's coordinator does), then
// refreshes their metadata before calling done: the member's acknowledging
// heartbeat follows its first by tens of milliseconds, and a periodic or
// coalesced refresh would leave it a whole heartbeat interval behind.
func (u *TopicCreator) CreateTopics(topics []streams.CreatableTopic, done func(map[string]error)) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), u.timeout)
		defer cancel()
		failed := u.create(ctx, topics)
		if u.meta != nil {
			var created []string
			for _, t := range topics {
				if failed[t.Name] == nil {
					created = append(created, t.Name)
				}
			}
			// An error leaves the topics to the next listing.
			_ = u.meta.refreshTopics(ctx, u.cl, created)
		}
		done(failed)
	}()
}

// create sends the CreateTopics request and returns the topics that failed
// (a topic that already exists did not).
func (u *TopicCreator) create(ctx context.Context, topics []streams.CreatableTopic) map[string]error {
	failed := map[string]error{}
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = int32(u.timeout / time.Millisecond)
	for _, t := range topics {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic = t.Name
		rt.NumPartitions = t.Partitions
		rt.ReplicationFactor = t.ReplicationFactor
		for _, c := range t.Configs {
			rc := kmsg.NewCreateTopicsRequestTopicConfig()
			rc.Name = c.Key
			rc.Value = kmsg.StringPtr(c.Value)
			rt.Configs = append(rt.Configs, rc)
		}
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, u.cl)
	if err != nil {
		for _, t := range topics {
			failed[t.Name] = fmt.Errorf("create topic: %w", err)
		}
		return failed
	}
	answered := make(map[string]bool, len(resp.Topics))
	for _, rt := range resp.Topics {
		answered[rt.Topic] = true
		err := kerr.ErrorForCode(rt.ErrorCode)
		if err == nil || errors.Is(err, kerr.TopicAlreadyExists) {
			continue
		}
		if rt.ErrorMessage != nil && *rt.ErrorMessage != "" {
			failed[rt.Topic] = errors.New(*rt.ErrorMessage)
		} else {
			failed[rt.Topic] = err
		}
	}
	for _, t := range topics {
		if !answered[t.Name] {
			failed[t.Name] = errors.New("no answer for the topic in the CreateTopics response")
		}
	}
	return failed
}
