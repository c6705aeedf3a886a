package route

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

// The classic group keys (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) are
// routed only with the migration on, all through classic: what differs
// per key is the translator's business (translate/NN_*.go). Without the
// migration no streams group has classic members, so the upstream serves
// every classic group and the keys are not intercepted at all.

// classic serves JoinGroup, SyncGroup, Heartbeat and LeaveGroup: through
// the gate, then, for a group the coordinator may serve, the translator,
// which answers for a served group and hands any other back to be
// forwarded. Any other group's request goes upstream at once: no decoding
// of its metadata, no hop through a coordinator queue.
func (m *Migration) classic(req *proxy.Request, out proxy.Outcome) {
	group := classicGroup(req.Body)
	m.gate.enter(group, func(answered func()) {
		if !m.a.o.Coordinator.MayServeClassic(group) {
			m.direct.Add(1)
			if j, ok := req.Body.(*kmsg.JoinGroupRequest); ok && j.MemberID != "" {
				// A member id streamshift gave out just before
				// the group was handed back goes without it.
				m.t.ForwardJoin(j, func(rewritten kmsg.Request, onAnswer func(kmsg.Response)) {
					m.forward(req, out, rewritten, answered, onAnswer)
				})
				return
			}
			m.forward(req, out, nil, answered, nil)
			return
		}
		m.translated.Add(1)
		m.t.Handle(req.Body, coordinatorClient(req),
			func(resp kmsg.Response) {
				answered()
				out.Respond(resp)
			},
			func(rewritten kmsg.Request, onAnswer func(kmsg.Response)) {
				m.forward(req, out, rewritten, answered, onAnswer)
			})
	}, func() { m.heldAlive(group, req.Body) })
}
