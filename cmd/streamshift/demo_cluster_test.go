package main

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// TestDemoClusterCreateTopics: the embedded cluster answers CreateTopics as
// a broker does (KIP-525): a topic created without configs gets a config
// list, not null, and every config has a valid source (Kafka's Java admin
// fails on a null list and on source -1); the topic id, partition count and
// replication factor are the created topic's; errors carry their code.
func TestDemoClusterCreateTopics(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := newDemoCluster()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	req.TimeoutMillis = 5000
	plain := kmsg.NewCreateTopicsRequestTopic()
	plain.Topic, plain.NumPartitions, plain.ReplicationFactor = "plain", 3, -1
	withCfg := kmsg.NewCreateTopicsRequestTopic()
	withCfg.Topic, withCfg.NumPartitions, withCfg.ReplicationFactor = "with-config", -1, -1
	rc := kmsg.NewCreateTopicsRequestTopicConfig()
	rc.Name, rc.Value = "cleanup.policy", kmsg.StringPtr("compact")
	withCfg.Configs = append(withCfg.Configs, rc)
	tooWide := kmsg.NewCreateTopicsRequestTopic()
	tooWide.Topic, tooWide.NumPartitions, tooWide.ReplicationFactor = "too-wide", 1, 4
	req.Topics = append(req.Topics, plain, withCfg, tooWide)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Topics) != 3 {
		t.Fatalf("answered %d topics, want 3", len(resp.Topics))
	}
	wantParts := map[string]int32{"plain": 3, "with-config": demoNumPartitions}
	for _, st := range resp.Topics[:2] {
		if st.ErrorCode != 0 || st.ConfigErrorCode != 0 {
			t.Fatalf("%s: error %v, config error %v", st.Topic, kerr.ErrorForCode(st.ErrorCode), kerr.ErrorForCode(st.ConfigErrorCode))
		}
		if st.Configs == nil || len(st.Configs) == 0 {
			t.Fatalf("%s: configs %v: want the topic's every config", st.Topic, st.Configs)
		}
		if st.TopicID == [16]byte{} || st.NumPartitions != wantParts[st.Topic] || st.ReplicationFactor != demoBrokers {
			t.Fatalf("%s: id %x, %d partitions, replication %d", st.Topic, st.TopicID, st.NumPartitions, st.ReplicationFactor)
		}
		policy := ""
		for _, c := range st.Configs {
			if c.Source < 1 || c.Source > 8 {
				t.Fatalf("%s: config %s has source %d, not one of Kafka's", st.Topic, c.Name, c.Source)
			}
			if c.Name == "cleanup.policy" && c.Value != nil {
				policy = *c.Value
				if st.Topic == "with-config" && c.Source != int8(kmsg.ConfigSourceDynamicTopicConfig) {
					t.Fatalf("with-config: cleanup.policy source %d, want DYNAMIC_TOPIC_CONFIG", c.Source)
				}
			}
		}
		if want := map[string]string{"plain": "delete", "with-config": "compact"}[st.Topic]; policy != want {
			t.Fatalf("%s: cleanup.policy %q, want %q", st.Topic, policy, want)
		}
	}
	if st := resp.Topics[2]; st.ErrorCode != kerr.InvalidReplicationFactor.Code || st.ErrorMessage == nil {
		t.Fatalf("too-wide: error %v (%v), want INVALID_REPLICATION_FACTOR with a message", kerr.ErrorForCode(st.ErrorCode), st.ErrorMessage)
	}

	// Again: TOPIC_ALREADY_EXISTS.
	again := kmsg.NewPtrCreateTopicsRequest()
	again.Version = 7
	again.Topics = append(again.Topics, plain)
	if resp, err := again.RequestWith(ctx, cl); err != nil || resp.Topics[0].ErrorCode != kerr.TopicAlreadyExists.Code {
		t.Fatalf("create again: %v %+v", err, resp)
	}
}

// TestDemoClusterAutoCreate: a producer's first record to a topic nobody
// created lands (auto.create.topics.enable, a broker's default), in a topic
// of num.partitions partitions: a Kafka Streams app's output topic appears.
func TestDemoClusterAutoCreate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := newDemoCluster()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.AllowAutoTopicCreation(), kgo.RecordRetries(3))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "never-created", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce to a topic nobody created: %v", err)
	}
	if n := len(c.PartitionInfos("never-created")); n != demoNumPartitions {
		t.Fatalf("auto-created topic has %d partitions, want %d", n, demoNumPartitions)
	}
}

// TestDemoClusterApiVersionsV3: an ApiVersions v3 answer has no supported
// feature starting at 0 (clients before Kafka 3.9 refuse it: KAFKA-17011),
// and still lists the cluster's features and API keys; v4 keeps kfake's.
func TestDemoClusterApiVersionsV3(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := newDemoCluster()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		versions *kversion.Versions
		want     int16
	}{{kversion.V3_8_0(), 3}, {kversion.V3_9_0(), 4}} {
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.MaxVersions(tc.versions))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
		cl.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.Version != tc.want || resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 || len(resp.SupportedFeatures) == 0 {
			t.Fatalf("v%d answer: version %d, error %d, %d keys, %d features", tc.want, resp.Version, resp.ErrorCode, len(resp.ApiKeys), len(resp.SupportedFeatures))
		}
		zero := false
		for _, f := range resp.SupportedFeatures {
			zero = zero || f.MinVersion < 1
		}
		if tc.want == 3 && zero {
			t.Fatalf("v3 answer has a feature starting at 0: %+v", resp.SupportedFeatures)
		}
	}
}

// TestDemoClusterListGroupsTypes: a ListGroups types filter spelled as
// Kafka's Java admin spells it ("Classic", "Consumer") lists the classic
// group, as a broker does (kfake alone lists none).
func TestDemoClusterListGroupsTypes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := newDemoCluster()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	joined := make(chan struct{})
	var once sync.Once
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumerGroup("listed"), kgo.ConsumeTopics("t"), kgo.AllowAutoTopicCreation(),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) { once.Do(func() { close(joined) }) }))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	pollCtx, stopPoll := context.WithCancel(ctx)
	defer stopPoll()
	go cl.PollFetches(pollCtx)
	select {
	case <-joined:
	case <-ctx.Done():
		t.Fatal("the consumer never joined its group")
	}
	for _, types := range [][]string{{"Classic", "Consumer"}, {"classic"}} {
		req := kmsg.NewPtrListGroupsRequest()
		req.TypesFilter = types
		resp, err := req.RequestWith(ctx, cl) // kgo asks every broker
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, g := range resp.Groups {
			found = found || g.Group == "listed" && g.GroupType == "classic"
		}
		if !found {
			t.Errorf("ListGroups with types %v does not list the classic group: %+v", types, resp.Groups)
		}
	}
}
