package anchor

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

func newCluster(t *testing.T) (*kgo.Client, *kadm.Client) {
	t.Helper()
	// kfake refuses session timeouts above 5 minutes: the anchor's default
	// of 30 minutes must fall back.
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl, kadm.NewClient(cl)
}

func newManager(t *testing.T, cl *kgo.Client) *Manager {
	t.Helper()
	m, err := New(Options{Client: cl, InstanceID: "streamshift-p1", HeartbeatInterval: 50 * time.Millisecond, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// TestAnchorLifecycle: the anchor joins as the static leader with protocol
// streamshift and the group's topics, follows a subscription change, takes
// its place back after a restart (same instance id), and leaves on Leave.
func TestAnchorLifecycle(t *testing.T) {
	cl, adm := newCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m := newManager(t, cl)
	m.Ensure("g", []string{"b", "a", "a"})
	gen, err := m.Generation(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	if gen.InstanceID != "streamshift-p1" || gen.MemberID == "" || gen.Generation < 1 {
		t.Fatalf("generation %+v", gen)
	}
	describe := func() kadm.DescribedGroup {
		t.Helper()
		d, err := adm.DescribeGroups(ctx, "g")
		if err != nil {
			t.Fatal(err)
		}
		return d["g"]
	}
	topics := func(g kadm.DescribedGroup) []string {
		meta, ok := g.Members[0].Join.AsConsumer()
		if !ok {
			t.Fatalf("anchor metadata is not ConsumerProtocol: %+v", g.Members[0])
		}
		return meta.Topics
	}
	g := describe()
	if g.State != "Stable" || g.ProtocolType != ProtocolType || g.Protocol != ProtocolName || len(g.Members) != 1 ||
		*g.Members[0].InstanceID != "streamshift-p1" || len(topics(g)) != 2 {
		t.Fatalf("upstream group %+v", g)
	}

	// A new subscription: the anchor rejoins (a new generation).
	m.Ensure("g", []string{"a"})
	for {
		g = describe()
		if g.State == "Stable" && len(g.Members) == 1 && len(topics(g)) == 1 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("subscription never changed: %+v", g)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Restart: a new manager with the same instance id replaces the member.
	m.Close()
	m2 := newManager(t, cl)
	gen2, err := m2.Generation(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	if gen2.MemberID == gen.MemberID {
		t.Fatalf("restarted anchor kept member id %s", gen.MemberID)
	}
	if g = describe(); len(g.Members) != 1 || g.Members[0].MemberID != gen2.MemberID {
		t.Fatalf("after restart: %+v, want only %s", g, gen2.MemberID)
	}

	if err := m2.Leave(ctx, "g"); err != nil {
		t.Fatal(err)
	}
	if g = describe(); g.State != "Empty" || len(g.Members) != 0 {
		t.Fatalf("after leave: %+v", g)
	}
	if len(m2.Groups()) != 0 {
		t.Fatalf("anchors left running: %v", m2.Groups())
	}
}
