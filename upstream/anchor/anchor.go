// Package anchor keeps one member per proxy-owned streams group in the
// upstream's classic group of the same id: the anchor member. Offsets of a
// proxy-owned group are committed upstream under the anchor's member id and
// generation (the broker would reject the proxy's streams member ids), and
// the anchor keeps the upstream group non-empty, so its offsets never expire
// under Kafka's Empty-group retention rule (KIP-211).
//
// The anchor is static (group.instance.id derived from the proxy id), so a
// restarted proxy takes its place back without a rebalance; it uses protocol
// type "consumer" and protocol name "streamshift", so a classic client that
// bypasses the proxy gets INCONSISTENT_GROUP_PROTOCOL instead of silently
// splitting the group; and it subscribes to the group's source and
// repartition topics, so no committed offset of them expires while the group
// is Stable. It is always the leader and syncs empty assignments.
//
// It is part of the control plane (package upstream); route's offset
// commits carry its Generation.
package anchor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ProtocolType and ProtocolName are what the anchor joins with.
const (
	ProtocolType = "consumer"
	ProtocolName = "streamshift"
)

// Requester sends a request to the right broker; *kgo.Client implements it
// (group requests go to the group's coordinator).
type Requester interface {
	Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
}

// Options configure a Manager.
type Options struct {
	// Client is the control-plane client; required.
	Client Requester
	// InstanceID is the anchors' group.instance.id ("streamshift-<proxy id>").
	InstanceID string
	// SessionTimeout is tried first; on INVALID_SESSION_TIMEOUT (above the
	// broker's group.max.session.timeout.ms) the anchor falls back to
	// shorter ones. Default 30 minutes, Kafka's default maximum.
	SessionTimeout time.Duration
	// RebalanceTimeout bounds an upstream rebalance. Default 60s.
	RebalanceTimeout time.Duration
	// HeartbeatInterval between heartbeats. Default 3s: a rebalance the
	// anchor takes part in is noticed quickly.
	HeartbeatInterval time.Duration
	// YieldWhenReplaced: an anchor fenced by another member of its static
	// instance id (FENCED_INSTANCE_ID) stops instead of rejoining: with
	// several instances the id is the cluster's, and the fencing member is
	// the group's new owner's anchor.
	YieldWhenReplaced bool
	// MaxBackoff caps the pause between failed attempts. Default 5s.
	MaxBackoff time.Duration
	// MaxInflight bounds the anchors' heartbeats and joins running at once
	// (scheduler.go). Default DefaultMaxInflight.
	MaxInflight int
	Log         zerolog.Logger
}

// fallbackSessionTimeouts are tried, in order, after the configured one is
// refused: Kafka's default group.max.session.timeout.ms, then its default
// consumer session timeout, which every broker accepts by default.
var fallbackSessionTimeouts = []time.Duration{30 * time.Minute, 5 * time.Minute, 45 * time.Second, 10 * time.Second}

// Generation identifies the anchor's current membership upstream: what an
// offset commit must carry.
type Generation struct {
	MemberID   string
	Generation int32
	InstanceID string
}

// Manager runs the anchors of all owned groups.
type Manager struct {
	opts Options

	mu      sync.Mutex
	anchors map[string]*anchor
	closed  bool
	// The scheduler (scheduler.go): its lanes (the anchors waiting to
	// act, the tasks running), its wake-up and its end.
	lanes         [lanes]lane
	wake          chan struct{}
	schedulerDone chan struct{}
}

// New returns a manager.
func New(opts Options) (*Manager, error) {
	if opts.Client == nil {
		return nil, errors.New("anchor: a control-plane client is required")
	}
	if opts.InstanceID == "" {
		return nil, errors.New("anchor: an instance id is required")
	}
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = 30 * time.Minute
	}
	if opts.RebalanceTimeout <= 0 {
		opts.RebalanceTimeout = time.Minute
	}
	if opts.HeartbeatInterval <= 0 {
		opts.HeartbeatInterval = 3 * time.Second
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 5 * time.Second
	}
	if opts.MaxInflight <= 0 {
		opts.MaxInflight = DefaultMaxInflight
	}
	return &Manager{opts: opts, anchors: map[string]*anchor{}, wake: make(chan struct{}, 1)}, nil
}

// InstanceID is the anchors' group.instance.id.
func (m *Manager) InstanceID() string { return m.opts.InstanceID }

// Ensure starts the group's anchor if it is not running, subscribed to
// topics; a running anchor whose topics differ rejoins with the new ones
// (nil topics keep the current subscription). It never blocks on I/O.
func (m *Manager) Ensure(group string, topics []string) {
	topics = normalize(topics)
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	a := m.anchors[group]
	if a == nil {
		ctx, cancel := context.WithCancel(context.Background())
		a = &anchor{m: m, group: group, topics: topics, ctx: ctx, cancel: cancel, done: make(chan struct{}), ready: make(chan struct{}), index: -1}
		m.anchors[group] = a
		m.startScheduler()
		m.schedule(a, time.Now(), true)
		m.mu.Unlock()
		return
	}
	m.mu.Unlock()
	if topics != nil {
		a.setTopics(topics)
	}
}

// Generation waits until the group's anchor is a synced member upstream
// and returns its identity; it starts the anchor if needed.
func (m *Manager) Generation(ctx context.Context, group string) (Generation, error) {
	m.Ensure(group, nil)
	m.mu.Lock()
	a := m.anchors[group]
	m.mu.Unlock()
	if a == nil {
		return Generation{}, errors.New("anchor: manager closed")
	}
	for {
		a.mu.Lock()
		gen, ok, ready := a.gen, a.synced, a.ready
		a.mu.Unlock()
		if ok {
			return gen, nil
		}
		select {
		case <-ready:
		case <-a.done:
			return Generation{}, fmt.Errorf("anchor of group %s stopped", group)
		case <-ctx.Done():
			return Generation{}, fmt.Errorf("anchor of group %s not joined yet: %w", group, ctx.Err())
		}
	}
}

// Fenced reports that the upstream rejected gen (ILLEGAL_GENERATION,
// UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS on a commit):
// the anchor rejoins unless it already moved past gen.
func (m *Manager) Fenced(group string, gen Generation) {
	m.mu.Lock()
	a := m.anchors[group]
	m.mu.Unlock()
	if a == nil {
		return
	}
	a.mu.Lock()
	if a.synced && a.gen == gen {
		a.unsync()
		a.rejoin = true
	}
	a.mu.Unlock()
	a.wake()
}

// Leave stops the group's anchor and removes it from the upstream group (the
// group was deleted, or is Empty and its offsets are deleted; the next
// Ensure starts it again). It waits for the LeaveGroup until ctx ends.
func (m *Manager) Leave(ctx context.Context, group string) error {
	m.Release(group)
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = group
	member := kmsg.NewLeaveGroupRequestMember()
	member.InstanceID = &m.opts.InstanceID
	reason := "streamshift: the streams group is deleted, or Empty and its offsets are being deleted"
	member.Reason = &reason
	req.Members = []kmsg.LeaveGroupRequestMember{member}
	resp, err := m.opts.Client.Request(ctx, req)
	if err != nil {
		return fmt.Errorf("anchor of group %s: leave: %w", group, err)
	}
	lr := resp.(*kmsg.LeaveGroupResponse)
	if err := kerr.ErrorForCode(lr.ErrorCode); err != nil && !errors.Is(err, kerr.UnknownMemberID) && !errors.Is(err, kerr.GroupIDNotFound) {
		return fmt.Errorf("anchor of group %s: leave: %w", group, err)
	}
	for _, mr := range lr.Members {
		if err := kerr.ErrorForCode(mr.ErrorCode); err != nil && !errors.Is(err, kerr.UnknownMemberID) {
			return fmt.Errorf("anchor of group %s: leave: %w", group, err)
		}
	}
	return nil
}

// Running reports whether the group's anchor runs.
func (m *Manager) Running(group string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.anchors[group] != nil
}

// Groups lists the groups with a running anchor.
func (m *Manager) Groups() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(maps.Keys(m.anchors))
}

// Close stops every anchor without leaving: static members stay in their
// groups until their session times out, so a restarted proxy takes their
// place back.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	anchors := make([]*anchor, 0, len(m.anchors))
	for _, a := range m.anchors {
		m.stop(a)
		anchors = append(anchors, a)
	}
	clear(m.anchors)
	scheduler := m.schedulerDone
	m.poke()
	m.mu.Unlock()
	for _, a := range anchors {
		<-a.done
	}
	if scheduler != nil {
		<-scheduler
	}
}

func normalize(topics []string) []string {
	if topics == nil {
		return nil
	}
	out := slices.Clone(topics)
	slices.Sort(out)
	return slices.Compact(out)
}
