package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// The demo's embedded cluster: kfake as a Kafka 3.9 broker would behave for
// a user's apps and tools, with two gaps of kfake's closed here.
//
//   - Topics are created on first use (auto.create.topics.enable=true,
//     num.partitions=1: a broker's defaults), so a Kafka Streams app's
//     output topic appears when the app first produces to it.
//   - CreateTopics is answered completely. kfake answers a topic created
//     without configs with a null config list, and the configs it does list
//     with config source -1: Kafka's Java admin dereferences the list
//     (`Cannot invoke "java.util.List.stream()" because "configs" is null`)
//     and refuses the source (`id should be positive, id: -1`), which kills
//     a classic Kafka Streams app creating its repartition topic. A broker
//     answers the topic's every config with its source (KIP-525); the demo
//     does the same, with the configs kfake's DescribeConfigs gives.
//   - ApiVersions v3 carries no supported feature with min version 0. kfake
//     answers a 3.9 cluster's features (kraft.version, group.version, …)
//     with min 0 at every version; clients before Kafka 3.9 reject a range
//     starting at 0 (KAFKA-17011: "Expected minValue >= 1"), which killed
//     a kafka-streams 3.6 app's producer. Kafka answers requests below v4
//     with such a feature's min as 1, as done here.
//   - ListGroups' types filter is read case-insensitively, as Kafka reads
//     it (GroupType.parse). kfake compares it case-sensitively with its
//     lower-case types, and Kafka's Java admin sends "Classic" and
//     "Consumer": `kafka-consumer-groups --list` listed no group at all.
const (
	demoBrokers       = 3
	demoNumPartitions = 1 // Kafka's num.partitions default
)

// demoCluster is the running embedded cluster.
type demoCluster struct {
	*kfake.Cluster
	admin *kgo.Client // straight to the cluster, for the configs of created topics
}

// newDemoCluster starts the embedded cluster.
func newDemoCluster() (*demoCluster, error) {
	c, err := kfake.NewCluster(
		kfake.NumBrokers(demoBrokers),
		kfake.MaxVersions(kversion.V3_9_0()),
		kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(demoNumPartitions),
	)
	if err != nil {
		return nil, err
	}
	admin, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ClientID("streamshift-demo-cluster"))
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("the cluster's own client: %w", err)
	}
	d := &demoCluster{Cluster: c, admin: admin}
	c.ControlKey(kmsg.CreateTopics.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		return d.createTopics(req.(*kmsg.CreateTopicsRequest))
	})
	c.ControlKey(kmsg.ApiVersions.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		return d.apiVersions(req.(*kmsg.ApiVersionsRequest))
	})
	c.ControlKey(kmsg.ListGroups.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		lowerTypesFilter(req.(*kmsg.ListGroupsRequest))
		return nil, nil, false // kfake answers the request, its filter fixed
	})
	return d, nil
}

// lowerTypesFilter writes a ListGroups types filter in kfake's spelling of
// the group types (lower case), which Kafka matches case-insensitively.
func lowerTypesFilter(req *kmsg.ListGroupsRequest) {
	for i, t := range req.TypesFilter {
		req.TypesFilter[i] = strings.ToLower(strings.TrimSpace(t))
	}
}

// Close stops the cluster's own client, then the cluster.
func (d *demoCluster) Close() {
	d.admin.Close()
	d.Cluster.Close()
}

// createTopics answers CreateTopics as a broker does. The topics are created
// by kfake's own code (Cluster.CreateTopic: its validation, its defaults);
// the answer is built here, complete. A request this does not cover (a
// replica assignment, validate-only) is left to kfake, unhandled.
func (d *demoCluster) createTopics(req *kmsg.CreateTopicsRequest) (kmsg.Response, error, bool) {
	if req.ValidateOnly {
		return nil, nil, false
	}
	seen := map[string]bool{}
	for _, rt := range req.Topics {
		if len(rt.ReplicaAssignment) > 0 {
			return nil, nil, false
		}
		if seen[rt.Topic] {
			return nil, nil, false // kfake answers a repeated name with INVALID_REQUEST for all
		}
		seen[rt.Topic] = true
	}
	resp := req.ResponseKind().(*kmsg.CreateTopicsResponse)
	var created []string
	for _, rt := range req.Topics {
		st := kmsg.NewCreateTopicsResponseTopic()
		st.Topic = rt.Topic
		if err := d.createTopic(rt); err != nil {
			var ke *kerr.Error
			if !errors.As(err, &ke) {
				ke = kerr.UnknownServerError
			}
			st.ErrorCode = ke.Code
			st.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("%s: %v", rt.Topic, err))
		} else {
			created = append(created, rt.Topic)
		}
		resp.Topics = append(resp.Topics, st)
	}
	// TopicInfo and PartitionInfos run on the cluster's loop, which serves
	// them while this control function runs: before topicConfigs sleeps it.
	for i := range resp.Topics {
		st := &resp.Topics[i]
		if st.ErrorCode != 0 {
			continue
		}
		info := d.TopicInfo(st.Topic)
		if info == nil { // deleted meanwhile
			st.ErrorCode = kerr.UnknownTopicOrPartition.Code
			continue
		}
		st.TopicID = info.TopicID
		st.NumPartitions = int32(len(d.PartitionInfos(st.Topic)))
		st.ReplicationFactor = int16(info.NumReplicas)
		st.Configs = []kmsg.CreateTopicsResponseTopicConfig{} // never null: the Java admin reads it
	}
	configs, configErr := d.topicConfigs(created)
	for i := range resp.Topics {
		st := &resp.Topics[i]
		if st.ErrorCode != 0 {
			continue
		}
		if configErr != nil {
			st.ConfigErrorCode = kerr.UnknownServerError.Code
			continue
		}
		r, ok := configs[st.Topic]
		if !ok || r.ErrorCode != 0 {
			st.ConfigErrorCode = kerr.UnknownTopicOrPartition.Code
			if ok {
				st.ConfigErrorCode = r.ErrorCode
			}
			continue
		}
		for _, c := range r.Configs {
			tc := kmsg.NewCreateTopicsResponseTopicConfig()
			tc.Name, tc.Value = c.Name, c.Value
			tc.ReadOnly, tc.IsSensitive = c.ReadOnly, c.IsSensitive
			tc.Source = int8(c.Source)
			st.Configs = append(st.Configs, tc)
		}
	}
	return resp, nil, true
}

// createTopic creates one requested topic with kfake's own code.
func (d *demoCluster) createTopic(rt kmsg.CreateTopicsRequestTopic) error {
	switch {
	case rt.NumPartitions == 0 || rt.NumPartitions < -1:
		return kerr.InvalidPartitions
	case int(rt.ReplicationFactor) > demoBrokers:
		return fmt.Errorf("%w: replication factor %d is larger than the %d brokers", kerr.InvalidReplicationFactor, rt.ReplicationFactor, demoBrokers)
	case rt.ReplicationFactor == 0 || rt.ReplicationFactor < -1:
		return kerr.InvalidReplicationFactor
	}
	configs := map[string]string{}
	for _, c := range rt.Configs {
		if c.Value != nil {
			configs[c.Name] = *c.Value
		}
	}
	return d.CreateTopic(rt.Topic, rt.NumPartitions, configs)
}

// topicConfigs asks the cluster for the configs of topics, as a broker
// answers DescribeConfigs (every config with its source). It runs inside a
// control function, which holds the cluster's request loop: SleepControl
// lets the loop serve this request meanwhile.
func (d *demoCluster) topicConfigs(topics []string) (map[string]kmsg.DescribeConfigsResponseResource, error) {
	if len(topics) == 0 {
		return nil, nil
	}
	req := kmsg.NewPtrDescribeConfigsRequest()
	for _, t := range topics {
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType = kmsg.ConfigResourceTypeTopic
		r.ResourceName = t
		req.Resources = append(req.Resources, r)
	}
	var (
		resp *kmsg.DescribeConfigsResponse
		err  error
	)
	d.SleepControl(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err = req.RequestWith(ctx, d.admin)
	})
	if err != nil {
		return nil, fmt.Errorf("describe the configs of %v: %w", topics, err)
	}
	out := map[string]kmsg.DescribeConfigsResponseResource{}
	for _, r := range resp.Resources {
		out[r.ResourceName] = r
	}
	return out, nil
}

// apiVersions answers ApiVersions v3 (the last version before KIP-1022's
// v4) with kfake's own answer, asked at its current version, its supported
// features' min version 0 raised to 1 as Kafka does for such a request.
// Other versions are kfake's: v0-v2 have no features, v4+ may carry 0.
func (d *demoCluster) apiVersions(req *kmsg.ApiVersionsRequest) (kmsg.Response, error, bool) {
	if req.Version != 3 {
		return nil, nil, false
	}
	ask := kmsg.NewPtrApiVersionsRequest()
	ask.ClientSoftwareName, ask.ClientSoftwareVersion = req.ClientSoftwareName, req.ClientSoftwareVersion
	var (
		resp *kmsg.ApiVersionsResponse
		err  error
	)
	d.SleepControl(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err = ask.RequestWith(ctx, d.admin)
	})
	if err != nil || resp.Version < 4 {
		return nil, nil, false // kfake answers it as it is
	}
	out := *resp
	out.Version = req.Version
	out.SupportedFeatures = nil
	for _, f := range resp.SupportedFeatures {
		if f.MaxVersion < 1 {
			continue // no range of 1.. to give
		}
		f.MinVersion = max(f.MinVersion, 1)
		out.SupportedFeatures = append(out.SupportedFeatures, f)
	}
	return &out, nil, true
}
