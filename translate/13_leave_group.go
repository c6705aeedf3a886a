package translate

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// LeaveGroup (key 13): the upstream's versions (v0-v5 kmsg knows), routed
// by route/classic.go with the migration on, unadvertised; this file is the
// key's only one.
//
// By version: v0-v2 leave one member (MemberID); v3+ a batch of members
// with their instance ids (KIP-345), answered per member (v5's reason is
// not used).

// LeaveGroup fences the leaving members (v0-v2: one member; v3+: a batch,
// answered per member).
func (t *Translator) LeaveGroup(req *kmsg.LeaveGroupRequest, respond func(*kmsg.LeaveGroupResponse), forward Forward) {
	var members []streams.ClassicLeaveMember
	if req.Version < 3 {
		members = []streams.ClassicLeaveMember{{MemberID: req.MemberID}}
	} else {
		for _, m := range req.Members {
			lm := streams.ClassicLeaveMember{MemberID: m.MemberID}
			if m.InstanceID != nil {
				lm.InstanceID = *m.InstanceID
			}
			members = append(members, lm)
		}
	}
	t.c.ClassicLeaveGroup(req.Group, members, func(errs []error, err error) {
		if errors.Is(err, streams.ErrClassicNotServed) {
			forward(nil, nil)
			return
		}
		resp := kmsg.NewPtrLeaveGroupResponse()
		resp.Version = req.Version
		if err != nil {
			resp.ErrorCode, _ = errorCode(err)
			respond(resp)
			return
		}
		if req.Version < 3 {
			resp.ErrorCode, _ = errorCode(errs[0])
			respond(resp)
			return
		}
		for i, m := range req.Members {
			rm := kmsg.NewLeaveGroupResponseMember()
			rm.MemberID, rm.InstanceID = m.MemberID, m.InstanceID
			rm.ErrorCode, _ = errorCode(errs[i])
			resp.Members = append(resp.Members, rm)
		}
		respond(resp)
	})
}
