package upstream

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// TestTopicCreatorOneRequestAndFreshMetadata checks that a
// heartbeat's missing internal topics go upstream in one CreateTopics
// request and are in the metadata image by the time done is called, without
// waiting for a listing (the member's next heartbeat follows within
// milliseconds).
func TestTopicCreatorOneRequestAndFreshMetadata(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	var mu sync.Mutex
	var requests [][]string
	cluster.KeepControl()
	cluster.ControlKey(int16(kmsg.CreateTopics), func(r kmsg.Request) (kmsg.Response, error, bool) {
		var names []string
		for _, t := range r.(*kmsg.CreateTopicsRequest).Topics {
			names = append(names, t.Topic)
		}
		mu.Lock()
		requests = append(requests, names)
		mu.Unlock()
		return nil, nil, false
	})
	// As the control plane: kgo's metadata cache would hide new topics for
	// up to MetadataMinAge.
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.MetadataMinAge(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "app-existing-changelog"); err != nil {
		t.Fatal(err)
	}
	md := NewMetadata(adm, time.Hour)
	if err := md.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	go md.Run(ctx) // the hourly listing must not be what finds the topics
	before := md.Image().Version()
	mu.Lock()
	requests = nil
	mu.Unlock()

	topics := []streams.CreatableTopic{
		{Name: "app-a-changelog", Partitions: 3, ReplicationFactor: -1, Configs: []streams.KeyValue{{Key: "cleanup.policy", Value: "compact"}}},
		{Name: "app-b-repartition", Partitions: 2, ReplicationFactor: -1},
		{Name: "app-existing-changelog", Partitions: 1, ReplicationFactor: -1},
	}
	type result struct {
		failed map[string]error
		img    streams.MetadataImage
	}
	got := make(chan result, 1)
	NewTopicCreator(cl, md, 10*time.Second).CreateTopics(topics, func(failed map[string]error) {
		got <- result{failed, md.Image()}
	})
	var r result
	select {
	case r = <-got:
	case <-ctx.Done():
		t.Fatal("done not called")
	}
	if len(r.failed) != 0 {
		t.Fatalf("failed = %v, want none (an existing topic is no failure)", r.failed)
	}
	if r.img.Version() == before {
		t.Fatalf("image version still %d after creation", before)
	}
	for name, want := range map[string]int32{"app-a-changelog": 3, "app-b-repartition": 2, "app-existing-changelog": 1} {
		tm, ok := r.img.Topic(name)
		if !ok || tm.Partitions != want || tm.ID == [16]byte{} {
			t.Errorf("image topic %s = %+v, %v; want %d partitions with an id", name, tm, ok, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(requests) != 1 || len(requests[0]) != 3 {
		t.Fatalf("CreateTopics requests = %v, want one with all 3 topics", requests)
	}
}
