package route

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/migration"
	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/translate"
	"github.com/streamshift/streamshift/upstream"
)

// MigrationOptions configure the online migration (translate's doc.go).
type MigrationOptions struct {
	Policy migration.MigrationConfig
	// Client is the control-plane client (*kgo.Client): DescribeGroups,
	// the fencing LeaveGroup and a hand-back's JoinGroups.
	Client upstream.Requester
	// RequestTimeout bounds one control-plane request. Default 10s.
	RequestTimeout time.Duration
	// DrainTimeout bounds how long a takeover waits for the group's
	// forwarded requests. Default 15s.
	DrainTimeout time.Duration
	// RecoveryWindow is how long the classic members of a group found
	// held by streamshift's anchor with no state here (a restart without
	// the durable log) wait for a streams member before the group is
	// handed back (migration_recovery.go). Default 10s: twice Kafka's
	// default streams heartbeat interval.
	RecoveryWindow time.Duration
}

// Migration is the online migration's part of the routes: the classic
// group APIs (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) go through the
// translator (classic), the offset APIs through the gate (Routes.gated), and
// a live classic group is taken over when its first streams-protocol member
// joins (maybeTakeOver). Requests of groups the proxy does not serve go
// upstream unchanged; on the way, their group is counted in flight (the
// drain) and the JoinGroup/SyncGroup/Heartbeat answers feed the
// ClassicObserver.
type Migration struct {
	// a is the route set the migration belongs to. The name is the one of
	// the adapter it replaced: classic keeps its body as it was, so fixes
	// to it port as they are.
	a        *Routes
	o        MigrationOptions
	gate     *migrationGate
	observer *translate.ClassicObserver
	up       *migrationUpstream
	t        *translate.Translator
	takeover *translate.Takeover
	recovery *recovery

	mu        sync.Mutex
	takeovers map[string]chan struct{}

	// direct and translated count the classic group requests forwarded
	// without asking the coordinator, and those handed to the translator.
	direct, translated atomic.Uint64
}

// newMigration builds the online migration of the route set r.
func newMigration(r *Routes, o MigrationOptions) (*Migration, error) {
	if o.Client == nil {
		return nil, fmt.Errorf("migration: a control-plane client is required")
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 10 * time.Second
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = 15 * time.Second
	}
	if o.RecoveryWindow <= 0 {
		o.RecoveryWindow = 10 * time.Second
	}
	m := &Migration{
		a:         r,
		o:         o,
		gate:      newMigrationGate(r.o.Coordinator, o.DrainTimeout, r.o.Log),
		observer:  &translate.ClassicObserver{Now: r.o.Coordinator.Now},
		up:        &migrationUpstream{a: r, groups: upstream.NewGroups(o.Client), timeout: o.RequestTimeout},
		takeovers: map[string]chan struct{}{},
	}
	m.t = translate.New(translate.Options{
		Coordinator: r.o.Coordinator,
		Migration:   o.Policy,
		Upstream:    m.up,
	})
	m.recovery = newRecovery(m, o.RecoveryWindow)
	m.takeover = &translate.Takeover{
		Coordinator: r.o.Coordinator,
		Upstream:    m.up,
		Gate:        m.gate,
		Observer:    m.observer,
		Migration:   o.Policy,
		TakenOver:   m.logTakenOver,
	}
	return m, nil
}

// logTakenOver logs each classic member a takeover found upstream: how long
// before the takeover the upstream last renewed its session, and whether it
// was carried over (its session had not run out) with what was left of it.
func (m *Migration) logTakenOver(st coordinator.ClassicGroupState) {
	now := m.a.o.Coordinator.Now()
	for _, cm := range st.Members {
		session := time.Duration(cm.SessionTimeoutMs) * time.Millisecond
		ev := m.a.o.Log.Info().Str("group", st.GroupID).Str("member", cm.MemberID).Str("client_id", cm.Client.ClientID).Dur("session_timeout", session)
		if cm.LastHeartbeat.IsZero() {
			ev.Msg("takeover: classic member carried over, its last heartbeat unknown: a whole session from now")
			continue
		}
		ago := now.Sub(cm.LastHeartbeat)
		ev = ev.Dur("last_heartbeat_ago", ago)
		if ago >= session {
			ev.Msg("takeover: classic member not carried over, its session ran out upstream; its tasks are free")
			continue
		}
		ev.Dur("session_left", session-ago).Msg("takeover: classic member carried over with what is left of its session")
	}
}

// heldAlive: a member's request held by a takeover's gate shows that its
// session is alive, as the upstream would have seen had it been forwarded.
func (m *Migration) heldAlive(group string, req kmsg.Request) {
	var member string
	switch r := req.(type) {
	case *kmsg.JoinGroupRequest:
		member = r.MemberID
	case *kmsg.SyncGroupRequest:
		member = r.MemberID
	case *kmsg.HeartbeatRequest:
		member = r.MemberID
	case *kmsg.OffsetCommitRequest:
		member = r.MemberID
	}
	m.observer.ObserveAlive(group, member)
}

// forward sends a classic request of a group the proxy does not serve
// upstream on the client's own connection (rewritten in its place if not
// nil), observes its answer (replaced first by replace, if not nil), then
// reports it answered to the gate and to onAnswer.
func (m *Migration) forward(req *proxy.Request, out proxy.Outcome, rewritten kmsg.Request, answered func(), onAnswer func(kmsg.Response), replace func(kmsg.Response) kmsg.Response) {
	body := req.Body
	if rewritten != nil {
		body = rewritten
	}
	out.ForwardRewritten(body, req.Version, func(resp kmsg.Response) kmsg.Response {
		if replace != nil {
			resp = replace(resp)
		}
		m.observe(body, resp)
		answered()
		if onAnswer != nil {
			onAnswer(resp)
		}
		return resp
	})
}

// counted wraps out so that whatever a route forwards is counted in
// flight for the group until it is answered (answered, from the gate).
func (m *Migration) counted(req *proxy.Request, out proxy.Outcome, answered func()) proxy.Outcome {
	return &countedOutcome{m: m, req: req, out: out, answered: answered}
}

type countedOutcome struct {
	m        *Migration
	req      *proxy.Request
	out      proxy.Outcome
	answered func()
}

func (c *countedOutcome) Respond(resp kmsg.Response) {
	c.answered()
	c.out.Respond(resp)
}

func (c *countedOutcome) Forward() { c.m.forward(c.req, c.out, nil, c.answered, nil, nil) }

func (c *countedOutcome) ForwardRewritten(req kmsg.Request, version int16, onResponse func(kmsg.Response) kmsg.Response) {
	c.out.ForwardRewritten(req, version, func(resp kmsg.Response) kmsg.Response {
		defer c.answered()
		if onResponse != nil {
			resp = onResponse(resp)
		}
		c.m.observe(c.req.Body, resp)
		return resp
	})
}

// classicGroup is the group a classic group or offset request names.
func classicGroup(req kmsg.Request) string {
	switch r := req.(type) {
	case *kmsg.JoinGroupRequest:
		return r.Group
	case *kmsg.SyncGroupRequest:
		return r.Group
	case *kmsg.HeartbeatRequest:
		return r.Group
	case *kmsg.LeaveGroupRequest:
		return r.Group
	case *kmsg.OffsetCommitRequest:
		return r.Group
	case *kmsg.TxnOffsetCommitRequest:
		return r.Group
	case *kmsg.OffsetFetchRequest:
		if len(r.Groups) == 1 {
			return r.Groups[0].Group
		}
		return r.Group
	}
	return ""
}

// observe feeds the ClassicObserver with what the upstream accepted: the
// session and rebalance timeouts and generation of a JoinGroup, the
// generation of a SyncGroup, Heartbeat or OffsetCommit answered without
// error.
func (m *Migration) observe(req kmsg.Request, resp kmsg.Response) {
	switch r := req.(type) {
	case *kmsg.JoinGroupRequest:
		if jr, ok := resp.(*kmsg.JoinGroupResponse); ok {
			m.observer.ObserveJoin(r, jr)
		}
	case *kmsg.SyncGroupRequest:
		if sr, ok := resp.(*kmsg.SyncGroupResponse); ok && sr.ErrorCode == 0 {
			m.observer.ObserveGeneration(r.Group, r.MemberID, r.Generation)
		}
	case *kmsg.HeartbeatRequest:
		hr, ok := resp.(*kmsg.HeartbeatResponse)
		switch {
		case !ok:
		case hr.ErrorCode == 0:
			m.observer.ObserveGeneration(r.Group, r.MemberID, r.Generation)
		case hr.ErrorCode == kerr.RebalanceInProgress.Code:
			m.observer.ObserveAlive(r.Group, r.MemberID)
		}
	case *kmsg.OffsetCommitRequest:
		cr, ok := resp.(*kmsg.OffsetCommitResponse)
		if !ok || r.Generation < 0 || r.MemberID == "" {
			return
		}
		for _, t := range cr.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					return
				}
			}
		}
		m.observer.ObserveGeneration(r.Group, r.MemberID, r.Generation)
	}
}

// gated runs serve for a request of group: at once without the migration;
// with it, through the takeover gate, with what serve forwards counted in
// flight for the group's drain. held, if not nil, is called when the gate
// holds the request.
func (rs *Routes) gated(req *proxy.Request, out proxy.Outcome, group string, held func(), serve func(proxy.Outcome)) {
	m := rs.mig
	if m == nil {
		serve(out)
		return
	}
	m.gate.enter(group, func(answered func()) { serve(m.counted(req, out, answered)) }, held)
}
