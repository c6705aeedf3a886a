package route

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/migration"
	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/translate"
)

// The classic group keys 11 JoinGroup, 12 Heartbeat, 13 LeaveGroup and 14
// SyncGroup are routed only with the migration on, at the upstream's
// versions, unadvertised, all by classic: the routing is the same for the
// four (the gate, the broker's ACLs, the translator for a group the
// coordinator may serve, else upstream at once, where the answers feed the
// ClassicObserver), and what differs per key and version is the
// translator's business, in the one NN_*.go file of each key
// (translate/11_join_group.go, 12_heartbeat.go, 13_leave_group.go,
// 14_sync_group.go). Without the migration no streams group has classic
// members, so the upstream serves every classic group and the keys are not
// intercepted at all.

// classicKey is the route of a classic group key R: the request goes
// through classic by its group (the key's facts, keys.go).
func classicKey[R kmsg.Request](rs *Routes) handler {
	h := handle(func(req *proxy.Request, r R, out proxy.Outcome) {
		group, _ := keys[kmsg.Key(r.Key())].group(r)
		rs.mig.classic(req, out, group)
	})
	return h
}

// classic serves JoinGroup, SyncGroup, Heartbeat and LeaveGroup: the
// coordinator's verdict (EnterClassic: the gate and whether it may serve
// the group, in one step) says whether the request waits for a takeover's
// release, goes upstream at once (no decoding of its metadata, no hop
// through a coordinator queue), or goes to the translator, which answers
// for a served group and hands any other back to be forwarded.
func (m *Migration) classic(req *proxy.Request, out proxy.Outcome, group string) {
	e := m.a.o.Coordinator.EnterClassic(group)
	if e.Verdict == coordinator.ClassicHeld {
		m.mig.Observer().ObserveHeldOn(group, req.Body, clientConnOf(req))
		e.Wait(func(e coordinator.ClassicEntry) { m.classicEntered(req, out, group, e) })
		return
	}
	m.classicEntered(req, out, group, e)
}

// classicEntered serves a classic request that passed the gate, as its
// verdict says (Forward or Serve); e.Answered takes it off the gate's count.
func (m *Migration) classicEntered(req *proxy.Request, out proxy.Outcome, group string, e coordinator.ClassicEntry) {
	forward := func(rewritten kmsg.Request, onAnswer func(kmsg.Response)) {
		m.forwardClassic(req, out, group, rewritten, e.Answered, onAnswer)
	}
	if e.Verdict == coordinator.ClassicForward {
		m.direct.Add(1)
		if j, ok := req.Body.(*kmsg.JoinGroupRequest); ok {
			// A member id streamshift gave out just before the
			// group was handed back goes without it.
			m.tr.ForwardJoin(j, forward)
			return
		}
		m.forward(req, out, nil, e.Answered, nil, nil)
		return
	}
	// The broker's ACLs first (authorize.go): a member that may
	// not READ the group gets the broker's own refusal.
	if denied, err := m.a.groupReadDenied(req, group); err != nil {
		e.Answered()
		out.Respond(notServed(req.Body, fmt.Errorf("%w: %w", kerr.CoordinatorNotAvailable, err)))
		return
	} else if denied {
		m.forward(req, out, nil, e.Answered, nil, nil)
		return
	}
	m.translated.Add(1)
	m.tr.Serve(req.Body, coordinatorClient(req), func(resp kmsg.Response) {
		e.Answered()
		out.Respond(resp)
	}, m.a.creator(req), forward)
}

// creator is createInternalTopics (authorize_topics.go) for the classic
// join and sync a translator serves for the client of req
// (translate.CreateTopics).
func (rs *Routes) creator(req *proxy.Request) translate.CreateTopics {
	return func(group string, topics []streams.CreatableTopic) {
		rs.createInternalTopics(req, group, topics, func([]string) {})
	}
}

// forwardClassic forwards a classic group request of a group the
// coordinator does not serve (rewritten in its place if not nil); a
// JoinGroup first passes the restart recovery (migration/recovery.go).
func (m *Migration) forwardClassic(req *proxy.Request, out proxy.Outcome, group string, rewritten kmsg.Request, answered func(), onAnswer func(kmsg.Response)) {
	j, ok := req.Body.(*kmsg.JoinGroupRequest)
	if !ok {
		m.forward(req, out, rewritten, answered, onAnswer, nil)
		return
	}
	if rewritten != nil {
		j = rewritten.(*kmsg.JoinGroupRequest)
	}
	held := migration.RecoveryJoin{Done: req.Done(), Rerun: func() { m.classic(req, out, group) }}
	m.mig.Recovery().Join(j, held, func(verdict migration.JoinVerdict, handedBack *kmsg.JoinGroupRequest) {
		switch verdict {
		case migration.JoinHeld:
			// Out of the gate's count while held: it runs again from
			// the start, and enters the gate again then.
			answered()
			if onAnswer != nil {
				onAnswer(migration.LoadingJoin(j))
			}
		case migration.JoinHandedBack:
			m.forward(req, out, handedBack, answered, onAnswer, nil)
		default:
			m.forward(req, out, rewritten, answered, onAnswer, func(resp kmsg.Response) kmsg.Response {
				if jr, ok := resp.(*kmsg.JoinGroupResponse); ok {
					return m.mig.Recovery().Refused(j, jr)
				}
				return resp
			})
		}
	})
}
