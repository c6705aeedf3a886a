package translate

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// Heartbeat (key 12): the upstream's versions (v0-v4 kmsg knows), routed by
// route/classic.go with the migration on, unadvertised; this file is the
// key's only one.
//
// By version: the same at every version (v3+ carries group.instance.id,
// v4 is flexible).

// Heartbeat keeps the member's session; REBALANCE_IN_PROGRESS sends it back
// to JoinGroup when the streams group has something for it.
func (t *Translator) Heartbeat(req *kmsg.HeartbeatRequest, respond func(*kmsg.HeartbeatResponse), forward Forward) {
	r := streams.ClassicHeartbeatRequest{GroupID: req.Group, MemberID: req.MemberID, Generation: req.Generation}
	if req.InstanceID != nil {
		r.InstanceID = *req.InstanceID
	}
	t.c.ClassicHeartbeat(r, func(err error) {
		if errors.Is(err, streams.ErrClassicNotServed) {
			forward(nil, nil)
			return
		}
		resp := kmsg.NewPtrHeartbeatResponse()
		resp.Version = req.Version
		resp.ErrorCode, _ = errorCode(err)
		respond(resp)
		if t.opts.HandBack != nil && (resp.ErrorCode == 0 || resp.ErrorCode == kerr.RebalanceInProgress.Code) {
			t.opts.HandBack.AfterHeartbeat(req.Group)
		}
	})
}
