package route

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/migration"
	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/translate"
	"github.com/streamshift/streamshift/upstream"
)

// MigrationOptions configure the online migration (migration's doc.go).
type MigrationOptions struct {
	Policy migration.MigrationConfig
	// Client is the control-plane client (*kgo.Client): DescribeGroups and
	// the fencing LeaveGroup (upstream.Groups).
	Client upstream.Requester
	// RequestTimeout bounds one control-plane request. Default 10s.
	RequestTimeout time.Duration
	// DrainTimeout bounds how long a takeover waits for the group's
	// forwarded requests. Default 15s.
	DrainTimeout time.Duration
	// RecoveryWindow is how long the classic members of a group found
	// held by streamshift's anchor with no state here (a restart without
	// the durable log) wait for a streams member before the group is
	// handed back (migration/recovery.go). Default 10s: twice Kafka's
	// default streams heartbeat interval.
	RecoveryWindow time.Duration
	// Events, if set, hears the takeovers' and hand-backs' phases.
	Events migration.Events
}

// Migration is the online migration's part of the routes, over package
// migration: the classic group APIs (JoinGroup, SyncGroup, Heartbeat,
// LeaveGroup) go through the gate to the translator (classic.go), the
// offset APIs through the gate (Routes.gated), and a live classic group is
// taken over when its first streams-protocol member joins. What is
// forwarded upstream on the way is counted in flight for the group's drain
// (countedOutcome) and its JoinGroup/SyncGroup/Heartbeat/OffsetCommit
// answers feed the observer.
type Migration struct {
	// a is the route set the migration belongs to.
	a   *Routes
	mig *migration.Migration
	// tr is mig's translator (Migration.Translator), which the classic
	// keys are served through.
	tr *translate.Translator

	// direct and translated count the classic group requests forwarded
	// without asking the coordinator, and those handed to the translator.
	direct, translated atomic.Uint64
}

// newMigration builds the online migration of the route set r.
func newMigration(r *Routes, o MigrationOptions) (*Migration, error) {
	if o.Client == nil {
		return nil, fmt.Errorf("migration: a control-plane client is required")
	}
	mo := migration.Options{
		Coordinator:    r.o.Coordinator,
		Ownership:      r.o.Ownership,
		Policy:         o.Policy,
		Groups:         upstream.NewGroups(o.Client),
		Anchors:        migrationAnchors{r},
		RequestTimeout: o.RequestTimeout,
		DrainTimeout:   o.DrainTimeout,
		RecoveryWindow: o.RecoveryWindow,
		Log:            r.o.Log,
		Events:         o.Events,
	}
	if r.o.Metadata != nil {
		mo.RefreshMetadata = r.o.Metadata.Refresh
	}
	mig, err := migration.New(mo)
	if err != nil {
		return nil, err
	}
	return &Migration{a: r, mig: mig, tr: mig.Translator()}, nil
}

// migrationAnchors are the routes' anchors as the migration uses them: a
// takeover's anchor subscribes to the topology the coordinator holds, and
// has AnchorWait to join.
type migrationAnchors struct{ rs *Routes }

func (a migrationAnchors) Join(ctx context.Context, group string) error {
	a.rs.ensureAnchor(group, nil)
	ctx, cancel := context.WithTimeout(ctx, a.rs.o.AnchorWait)
	defer cancel()
	_, err := a.rs.o.Anchors.Generation(ctx, group)
	return err
}

func (a migrationAnchors) Leave(ctx context.Context, group string) error {
	return a.rs.o.Anchors.Leave(ctx, group)
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
		m.mig.Observer().ObserveAnswer(body, resp, clientConnOf(req))
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
		c.m.mig.Observer().ObserveAnswer(c.req.Body, resp, clientConnOf(c.req))
		return resp
	})
}

// joinedOutcome tells the restart recovery when a streams member's join is
// answered without error.
type joinedOutcome struct {
	proxy.Outcome
	r     *migration.Recovery
	group string
}

func (o joinedOutcome) Respond(resp kmsg.Response) {
	o.Outcome.Respond(resp)
	if hr, ok := resp.(*kmsg.StreamsGroupHeartbeatResponse); ok && hr.ErrorCode == 0 {
		o.r.StreamsJoined(o.group)
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
	e := m.a.o.Coordinator.EnterClassic(group)
	if e.Verdict == coordinator.ClassicHeld {
		if held != nil {
			held()
		}
		e.Wait(func(e coordinator.ClassicEntry) { serve(m.counted(req, out, e.Answered)) })
		return
	}
	serve(m.counted(req, out, e.Answered))
}
