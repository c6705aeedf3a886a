package route

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/proxy"
)

// startProxy runs a proxy in front of upstream on free ports.
func startProxy(t *testing.T, upstream []string) (*proxy.Proxy, string) {
	t.Helper()
	for attempt := 0; attempt < 20; attempt++ {
		base := 20000 + rand.IntN(30000)
		listen := "127.0.0.1:" + strconv.Itoa(base)
		p, err := proxy.New(proxy.Options{
			Upstream: upstream, Listen: listen, NodeIDMin: 0, NodeIDMax: 3, EventLoops: 1,
			DialTimeout: 2 * time.Second, ShutdownTimeout: 5 * time.Second, Log: zerolog.Nop(),
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		errCh := make(chan error, 1)
		go func() { errCh <- p.Run(ctx) }()
		deadline := time.Now().Add(10 * time.Second)
		for !p.Ready() && time.Now().Before(deadline) {
			select {
			case err := <-errCh:
				cancel()
				if err != nil && strings.Contains(err.Error(), "start listeners") {
					goto retry
				}
				t.Fatalf("proxy run: %v", err)
			case <-time.After(5 * time.Millisecond):
			}
		}
		if !p.Ready() {
			cancel()
			t.Fatal("proxy not ready")
		}
		t.Cleanup(func() {
			cancel()
			<-errCh
		})
		return p, listen
	retry:
	}
	t.Fatal("no free ports")
	return nil, ""
}

// TestThroughProxy sends StreamsGroupHeartbeat and StreamsGroupDescribe with
// a franz-go client through the proxy in front of kfake: the coordinator
// answers, with topic metadata read from the cluster.
func TestThroughProxy(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	ctl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	adm := kadm.NewClient(ctl)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 3, 1, nil, "words"); err != nil {
		t.Fatal(err)
	}

	md := coordinator.NewUpstreamMetadata(adm, time.Second)
	if err := md.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	go md.Run(ctx)
	cfg := coordinator.DefaultConfig()
	cfg.Defaults.InitialRebalanceDelay = 0
	c, err := coordinator.New(coordinator.Options{Config: cfg, Metadata: md, TopicCreator: coordinator.NewUpstreamTopicCreator(ctl, md, 10*time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	p, listen := startProxy(t, cluster.ListenAddrs())
	if err := Register(p, c); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(listen), kgo.ClientID("streams-app"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	// The proxy advertises both keys.
	versions, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, k := range versions.ApiKeys {
		if (k.ApiKey == 88 || k.ApiKey == 89) && k.MaxVersion == 1 {
			found++
		}
	}
	if found != 2 {
		t.Fatalf("ApiVersions lacks 88/89 v1: %+v", versions.ApiKeys)
	}

	// kgo does not route streams-group requests to the group coordinator
	// itself: find it, then talk to that node (through its proxy port).
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey = "app"
	fc.CoordinatorKeys = []string{"app"}
	fresp, err := fc.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	node := fresp.NodeID
	if len(fresp.Coordinators) > 0 {
		node = fresp.Coordinators[0].NodeID
	}
	broker := cl.Broker(int(node))

	join := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	join.Group = "app"
	join.MemberID = "member-1"
	join.EndpointInformationEpoch = -1
	join.RebalanceTimeoutMillis = 30000
	pid := "process-1"
	join.ProcessID = &pid
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	st.SubtopologyID = "0"
	st.SourceTopics = []string{"words"}
	st.StateChangelogTopics = []kmsg.TopicInfo{{Topic: "app-counts-changelog", Configs: []kmsg.TopicInfoConfig{{Key: "cleanup.policy", Value: "compact"}}}}
	topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{st}
	join.Topology = &topo
	join.ActiveTasks, join.StandbyTasks, join.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	resp, err := join.RequestWith(ctx, broker)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 0 || len(resp.Status) != 1 || resp.Status[0].StatusCode != coordinator.StatusMissingInternalTopics {
		t.Fatalf("join: %+v", resp)
	}
	// The coordinator creates the changelog upstream; once the metadata
	// shows it, the member gets its tasks.
	var epoch int32 = resp.MemberEpoch
	for {
		hb := kmsg.NewPtrStreamsGroupHeartbeatRequest()
		hb.Group, hb.MemberID, hb.MemberEpoch = "app", "member-1", epoch
		resp, err = hb.RequestWith(ctx, broker)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ErrorCode != 0 {
			t.Fatalf("heartbeat: %+v", resp)
		}
		epoch = resp.MemberEpoch
		if len(resp.Status) == 0 && resp.ActiveTasks != nil {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("never assigned: %+v", resp)
		case <-time.After(100 * time.Millisecond):
		}
	}
	if len(resp.ActiveTasks) != 1 || len(resp.ActiveTasks[0].Partitions) != 3 {
		t.Fatalf("tasks %+v", resp.ActiveTasks)
	}
	topics, err := adm.ListTopics(ctx, "app-counts-changelog")
	if err != nil || len(topics["app-counts-changelog"].Partitions) != 3 {
		t.Fatalf("changelog upstream: %+v %v", topics, err)
	}

	desc := kmsg.NewPtrStreamsGroupDescribeRequest()
	desc.Groups = []string{"app"}
	dresp, err := desc.RequestWith(ctx, broker)
	if err != nil {
		t.Fatal(err)
	}
	if len(dresp.Groups) != 1 || dresp.Groups[0].State != "Stable" || len(dresp.Groups[0].Members) != 1 ||
		dresp.Groups[0].Members[0].ClientID != "streams-app" || !strings.HasPrefix(dresp.Groups[0].Members[0].ClientHost, "/127.0.0.1") {
		t.Fatalf("describe: %+v", dresp.Groups)
	}
}
