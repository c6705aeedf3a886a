package anchor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// anchor is one group's anchor member: a goroutine joining, syncing and
// heartbeating the upstream classic group.
type anchor struct {
	m      *Manager
	group  string
	cancel context.CancelFunc
	done   chan struct{}
	kick   chan struct{}

	mu       sync.Mutex
	topics   []string
	memberID string
	gen      Generation
	synced   bool
	ready    chan struct{} // closed when synced; replaced when unsynced
	rejoin   bool          // rejoin at the next turn
	session  int           // index into the session timeouts being tried
}

func (a *anchor) wake() {
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

func (a *anchor) setTopics(topics []string) {
	a.mu.Lock()
	changed := !slices.Equal(a.topics, topics)
	if changed {
		a.topics = topics
		a.rejoin = true
	}
	a.mu.Unlock()
	if changed {
		a.wake()
	}
}

// unsync marks the anchor as not a synced member (a.mu held).
func (a *anchor) unsync() {
	if a.synced {
		a.synced = false
		a.ready = make(chan struct{})
	}
}

func (a *anchor) sessionTimeouts() []time.Duration {
	out := []time.Duration{a.m.opts.SessionTimeout}
	for _, d := range fallbackSessionTimeouts {
		if d < a.m.opts.SessionTimeout {
			out = append(out, d)
		}
	}
	return out
}

func (a *anchor) run(ctx context.Context) {
	defer close(a.done)
	log := a.m.opts.Log.With().Str("group", a.group).Str("instance", a.m.opts.InstanceID).Logger()
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := a.joinAndSync(ctx)
		if err == nil {
			backoff = 100 * time.Millisecond
			log.Info().Str("member", a.gen.MemberID).Int32("generation", a.gen.Generation).Msg("anchor member joined the upstream group")
			err = a.heartbeatLoop(ctx)
		}
		if ctx.Err() != nil {
			return
		}
		if a.m.opts.YieldWhenReplaced && errors.Is(err, kerr.FencedInstanceID) {
			a.m.forget(a)
			log.Info().Err(err).Msg("anchor member replaced by another streamshift instance's (the group moved there); this one stops")
			return
		}
		log.Warn().Err(err).Dur("backoff", backoff).Msg("anchor member rejoins")
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, a.m.opts.MaxBackoff)
	}
}

// joinAndSync joins the upstream group and, as its leader, syncs empty
// assignments to every member.
func (a *anchor) joinAndSync(ctx context.Context) error {
	a.mu.Lock()
	a.unsync()
	a.rejoin = false
	topics := a.topics
	memberID := a.memberID
	a.mu.Unlock()

	meta := kmsg.NewConsumerMemberMetadata()
	meta.Version = 0
	meta.Topics = append([]string{}, topics...)
	instance := a.m.opts.InstanceID

	timeouts := a.sessionTimeouts()
	var join *kmsg.JoinGroupResponse
	for {
		a.mu.Lock()
		st := timeouts[min(a.session, len(timeouts)-1)]
		a.mu.Unlock()
		req := kmsg.NewPtrJoinGroupRequest()
		req.Group = a.group
		req.SessionTimeoutMillis = int32(st / time.Millisecond)
		req.RebalanceTimeoutMillis = int32(a.m.opts.RebalanceTimeout / time.Millisecond)
		req.MemberID = memberID
		req.InstanceID = &instance
		req.ProtocolType = ProtocolType
		req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: ProtocolName, Metadata: meta.AppendTo(nil)}}
		reason := "streamshift anchor member of a proxy-owned streams group"
		req.Reason = &reason
		resp, err := a.m.opts.Client.Request(ctx, req)
		if err != nil {
			return fmt.Errorf("join: %w", err)
		}
		join = resp.(*kmsg.JoinGroupResponse)
		err = kerr.ErrorForCode(join.ErrorCode)
		switch {
		case err == nil:
		case errors.Is(err, kerr.MemberIDRequired):
			memberID = join.MemberID
			continue
		case errors.Is(err, kerr.InvalidSessionTimeout) && a.session < len(timeouts)-1:
			a.mu.Lock()
			a.session++
			a.mu.Unlock()
			continue
		case errors.Is(err, kerr.UnknownMemberID), errors.Is(err, kerr.FencedInstanceID):
			a.setMemberID("")
			return fmt.Errorf("join: %w", err)
		default:
			return fmt.Errorf("join: %w", err)
		}
		break
	}
	a.setMemberID(join.MemberID)

	sync := kmsg.NewPtrSyncGroupRequest()
	sync.Group = a.group
	sync.Generation = join.Generation
	sync.MemberID = join.MemberID
	sync.InstanceID = &instance
	pt, pn := ProtocolType, ProtocolName
	sync.ProtocolType, sync.Protocol = &pt, &pn
	if join.LeaderID == join.MemberID && !join.SkipAssignment {
		empty := kmsg.NewConsumerMemberAssignment()
		body := empty.AppendTo(nil)
		for _, mb := range join.Members {
			sync.GroupAssignment = append(sync.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: mb.MemberID, MemberAssignment: body})
		}
	}
	resp, err := a.m.opts.Client.Request(ctx, sync)
	if err != nil {
		return fmt.Errorf("sync generation %d: %w", join.Generation, err)
	}
	if err := kerr.ErrorForCode(resp.(*kmsg.SyncGroupResponse).ErrorCode); err != nil {
		return fmt.Errorf("sync generation %d: %w", join.Generation, err)
	}
	a.mu.Lock()
	a.gen = Generation{MemberID: join.MemberID, Generation: join.Generation, InstanceID: instance}
	a.synced = true
	close(a.ready)
	a.mu.Unlock()
	return nil
}

// heartbeatLoop heartbeats until the anchor must rejoin.
func (a *anchor) heartbeatLoop(ctx context.Context) error {
	t := time.NewTicker(a.m.opts.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		case <-a.kick:
		}
		a.mu.Lock()
		gen, rejoin := a.gen, a.rejoin
		a.mu.Unlock()
		if rejoin {
			return errors.New("rejoin requested (subscription changed or a commit was fenced)")
		}
		req := kmsg.NewPtrHeartbeatRequest()
		req.Group = a.group
		req.Generation = gen.Generation
		req.MemberID = gen.MemberID
		req.InstanceID = &gen.InstanceID
		hctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		resp, err := a.m.opts.Client.Request(hctx, req)
		cancel()
		if err != nil {
			// The coordinator may have moved: kgo finds it again on the
			// next request; a rejoin settles the membership.
			return fmt.Errorf("heartbeat: %w", err)
		}
		switch err := kerr.ErrorForCode(resp.(*kmsg.HeartbeatResponse).ErrorCode); {
		case err == nil:
		case errors.Is(err, kerr.UnknownMemberID), errors.Is(err, kerr.FencedInstanceID):
			a.setMemberID("")
			return fmt.Errorf("heartbeat: %w", err)
		default:
			// REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, NOT_COORDINATOR,
			// COORDINATOR_NOT_AVAILABLE, ...: rejoin.
			return fmt.Errorf("heartbeat: %w", err)
		}
	}
}

// setMemberID keeps the member id the next join sends ("" after the
// coordinator forgot or fenced it: the next join starts afresh).
func (a *anchor) setMemberID(id string) {
	a.mu.Lock()
	a.memberID = id
	a.mu.Unlock()
}
