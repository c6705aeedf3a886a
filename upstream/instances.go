package upstream

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// InstanceGroupOptions configure JoinInstanceGroup.
type InstanceGroupOptions struct {
	Seeds []string
	// Opts are added to the group's client (TLS, SASL, ...).
	Opts []kgo.Opt
	// Group is the upstream group id (from coordinator.cluster-id).
	Group string
	// Topic and Partitions are the group log's: its partitions are what
	// the instances share.
	Topic      string
	Partitions int32
	// Self is this instance (ProxyID and Host required).
	Self InstanceInfo
	// SessionTimeout of the instance's membership (default 10s): a dead
	// instance's partitions move once it passed.
	SessionTimeout time.Duration
	// Assigned is told the partitions this instance gained; it starts
	// loading them and returns at once.
	Assigned func(partitions []int32)
	// Revoked is told the partitions this instance gives up (handed to
	// another instance, or the membership is lost): when it returns, their
	// groups are no longer served here. It must not block on the network.
	Revoked func(partitions []int32)
	// Fatal is told an error that ends this instance's membership for good
	// (a duplicate proxy id or advertised host); the instance must stop.
	Fatal func(error)
	// MapChanged, if set, is told that Map has a new value; it must
	// return at once.
	MapChanged func()
	Log        zerolog.Logger
}

// InstanceGroup is this instance's membership in the cluster's upstream
// group: a classic consumer group (static member "streamshift-instance-<proxy
// id>", so a restarted instance takes its place back at once) whose
// "partitions" are the group log's, balanced by streamshift's own balancer
// (instance_balancer.go). Every member learns the whole partition →
// instance map (Map).
type InstanceGroup struct {
	o  InstanceGroupOptions
	cl *kgo.Client

	mu    sync.Mutex
	cur   ClusterMap
	fatal bool
	// changes counts the partitions gained and lost (metrics).
	changes int

	cancel context.CancelFunc
	done   chan struct{}
}

// InstanceMemberID is the static group.instance.id of an instance.
func InstanceMemberID(proxyID string) string { return "streamshift-instance-" + proxyID }

// JoinInstanceGroup joins the cluster's group; the assignment arrives on
// Assigned.
func JoinInstanceGroup(o InstanceGroupOptions) (*InstanceGroup, error) {
	if o.Group == "" || o.Topic == "" || o.Partitions <= 0 || o.Self.ProxyID == "" || o.Self.Host == "" {
		return nil, errors.New("instance group: group, topic, partitions, proxy id and host are required")
	}
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = 10 * time.Second
	}
	g := &InstanceGroup{o: o, done: make(chan struct{})}
	g.cur = ClusterMap{V: instanceFormatVersion, Owners: make([]string, o.Partitions)}
	bal := &instanceBalancer{topic: o.Topic, partitions: o.Partitions, self: o.Self, onMap: g.setMap}
	hb := o.SessionTimeout / 5
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(o.Seeds...),
		kgo.ConsumerGroup(o.Group),
		kgo.ConsumeTopics(o.Topic),
		kgo.Balancers(bal),
		kgo.InstanceID(InstanceMemberID(o.Self.ProxyID)),
		kgo.SessionTimeout(o.SessionTimeout),
		kgo.HeartbeatInterval(hb),
		kgo.RebalanceTimeout(o.SessionTimeout * 3),
		kgo.DisableAutoCommit(),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			if ps := m[o.Topic]; len(ps) > 0 {
				g.count(len(ps))
				o.Log.Info().Ints32("partitions", ps).Msg("instance group: log partitions assigned to this instance")
				o.Assigned(sorted(ps))
			}
		}),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			if ps := m[o.Topic]; len(ps) > 0 {
				g.count(len(ps))
				o.Log.Info().Ints32("partitions", ps).Msg("instance group: log partitions handed over by this instance")
				o.Revoked(sorted(ps))
			}
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			if ps := m[o.Topic]; len(ps) > 0 {
				g.count(len(ps))
				o.Log.Warn().Ints32("partitions", ps).Msg("instance group: membership lost; this instance no longer serves these log partitions")
				o.Revoked(sorted(ps))
			}
		}),
	}, o.Opts...)...)
	if err != nil {
		return nil, fmt.Errorf("instance group %s: %w", o.Group, err)
	}
	// The group's partitions are ownership, not data: nothing is fetched
	// (each owner reads its partitions itself, read_committed, GroupLog).
	cl.PauseFetchTopics(o.Topic)
	g.cl = cl
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	go g.poll(ctx)
	return g, nil
}

// poll surfaces the group's errors, which kgo hands out through polls.
func (g *InstanceGroup) poll(ctx context.Context) {
	defer close(g.done)
	for ctx.Err() == nil {
		fs := g.cl.PollFetches(ctx)
		if fs.IsClientClosed() {
			return
		}
		fs.EachError(func(_ string, _ int32, err error) {
			if errors.Is(err, context.Canceled) {
				return
			}
			if errors.Is(err, kerr.FencedInstanceID) {
				g.fail(fmt.Errorf("instance group %s: another streamshift instance joined with proxy-id %q (%w): proxy ids must be unique", g.o.Group, g.o.Self.ProxyID, err))
				return
			}
			g.o.Log.Warn().Err(err).Msg("instance group")
		})
	}
}

func (g *InstanceGroup) fail(err error) {
	g.mu.Lock()
	first := !g.fatal
	g.fatal = true
	g.mu.Unlock()
	if first && g.o.Fatal != nil {
		g.o.Log.Error().Err(err).Msg("instance group: this instance must stop")
		go g.o.Fatal(err)
	}
}

func (g *InstanceGroup) setMap(m ClusterMap) {
	if m.Error != "" {
		g.fail(fmt.Errorf("instance group %s: %s", g.o.Group, m.Error))
		return
	}
	if int32(len(m.Owners)) != g.o.Partitions {
		g.fail(fmt.Errorf("instance group %s: the cluster's leader balances %d log partitions, this instance has coordinator.log-partitions %d", g.o.Group, len(m.Owners), g.o.Partitions))
		return
	}
	g.mu.Lock()
	g.cur = m
	g.mu.Unlock()
	if g.o.MapChanged != nil {
		g.o.MapChanged()
	}
}

func (g *InstanceGroup) count(n int) {
	g.mu.Lock()
	g.changes += n
	g.mu.Unlock()
}

// OwnershipChanges counts the partitions gained and given up so far.
func (g *InstanceGroup) OwnershipChanges() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.changes
}

// Map is the latest partition → instance map.
func (g *InstanceGroup) Map() ClusterMap {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cur
}

// Self is this instance's info.
func (g *InstanceGroup) Self() InstanceInfo { return g.o.Self }

// Leave hands this instance's partitions over (a graceful stop): the
// client closes (Revoked runs for what it held) and the static member
// leaves the group by its instance id, so the others rebalance at once
// instead of after the session timeout.
func (g *InstanceGroup) Leave(ctx context.Context) error {
	g.Close()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(g.o.Seeds...)}, g.o.Opts...)...)
	if err != nil {
		return fmt.Errorf("instance group %s: leave: %w", g.o.Group, err)
	}
	defer cl.Close()
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = g.o.Group
	m := kmsg.NewLeaveGroupRequestMember()
	id := InstanceMemberID(g.o.Self.ProxyID)
	reason := "streamshift: graceful stop, the instance hands its log partitions over"
	m.InstanceID, m.Reason = &id, &reason
	req.Members = []kmsg.LeaveGroupRequestMember{m}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("instance group %s: leave: %w", g.o.Group, err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil && !errors.Is(err, kerr.UnknownMemberID) {
		return fmt.Errorf("instance group %s: leave: %w", g.o.Group, err)
	}
	return nil
}

// Close stops the membership without leaving (the static member stays
// until its session ends, or this instance restarts): what Revoked was
// told last is what it held.
func (g *InstanceGroup) Close() {
	g.cancel()
	g.cl.Close()
	<-g.done
}

func sorted(ps []int32) []int32 {
	out := append([]int32(nil), ps...)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
