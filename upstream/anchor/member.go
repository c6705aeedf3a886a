package anchor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/backoff"
)

// anchor is one group's anchor member: joined, synced and heartbeated in
// the upstream classic group by short tasks the manager's scheduler starts
// (scheduler.go); between them it holds no goroutine.
type anchor struct {
	m      *Manager
	group  string
	ctx    context.Context // cancelled when the anchor stops
	cancel context.CancelFunc
	done   chan struct{} // closed once stopped and no task of it runs

	// Guarded by m.mu: the scheduler's part.
	next    time.Time // when it acts next, while queued
	index   int       // in its lane's queue; -1 when not queued
	lane    int       // the lane it is queued in or runs in
	busy    bool      // a task of it runs
	stopped bool
	kicked  bool // woken while busy: act again at once

	// Owned by its tasks, which never overlap.
	retry backoff.Backoff

	mu       sync.Mutex
	topics   []string
	memberID string
	gen      Generation
	synced   bool
	ready    chan struct{} // closed when synced; replaced when unsynced
	rejoin   bool          // rejoin at the next turn
	session  int           // index into the session timeouts being tried
}

// wake makes the anchor act at once (a rejoin was asked for).
func (a *anchor) wake() {
	m := a.m
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case a.stopped:
	case a.busy:
		a.kicked = true
	default:
		m.schedule(a, time.Now(), true)
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

// mustJoin reports whether the anchor's next task is a join.
func (a *anchor) mustJoin() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return !a.synced || a.rejoin
}

// step is one task: a join and sync if the anchor is not a synced member
// or must rejoin, else a heartbeat. It returns when the anchor acts next,
// or stop when it must end (cancelled, or replaced by another instance's).
func (a *anchor) step() (next time.Time, stop bool) {
	ctx := a.ctx
	var err error
	if a.mustJoin() {
		if err = a.joinAndSync(ctx); err == nil {
			a.retry.Reset()
			a.log().Info().Str("member", a.gen.MemberID).Int32("generation", a.gen.Generation).Msg("anchor member joined the upstream group")
			return time.Now().Add(a.m.opts.HeartbeatInterval), false
		}
	} else if err = a.heartbeat(ctx); err == nil {
		return time.Now().Add(a.m.opts.HeartbeatInterval), false
	}
	if ctx.Err() != nil {
		return time.Time{}, true
	}
	if a.m.opts.YieldWhenReplaced && errors.Is(err, kerr.FencedInstanceID) {
		a.log().Info().Err(err).Msg("anchor member replaced by another streamshift instance's (the group moved there); this one stops")
		return time.Time{}, true
	}
	a.mu.Lock()
	a.unsync()
	a.mu.Unlock()
	a.retry.Min, a.retry.Max = 100*time.Millisecond, a.m.opts.MaxBackoff
	wait := a.retry.Next()
	a.log().Warn().Err(err).Dur("backoff", wait).Msg("anchor member rejoins")
	return time.Now().Add(wait), false
}

func (a *anchor) log() *zerolog.Logger {
	l := a.m.opts.Log.With().Str("group", a.group).Str("instance", a.m.opts.InstanceID).Logger()
	return &l
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

// heartbeat sends one heartbeat; an error means the anchor must rejoin.
func (a *anchor) heartbeat(ctx context.Context) error {
	a.mu.Lock()
	gen := a.gen
	a.mu.Unlock()
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
		return nil
	case errors.Is(err, kerr.UnknownMemberID), errors.Is(err, kerr.FencedInstanceID):
		a.setMemberID("")
		return fmt.Errorf("heartbeat: %w", err)
	default:
		// REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, NOT_COORDINATOR,
		// COORDINATOR_NOT_AVAILABLE, ...: rejoin.
		return fmt.Errorf("heartbeat: %w", err)
	}
}

// setMemberID keeps the member id the next join sends ("" after the
// coordinator forgot or fenced it: the next join starts afresh).
func (a *anchor) setMemberID(id string) {
	a.mu.Lock()
	a.memberID = id
	a.mu.Unlock()
}
