package translate

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// SyncGroup (key 14): the upstream's versions (v0-v5 kmsg knows), routed by
// route/classic.go with the migration on, unadvertised; this file is the
// key's only one.
//
// By version: v5 adds protocol type and name, checked against the
// group's classic protocol and echoed in the answer; the assignment is the
// streams group's at every version (AssignmentInfo at the member's own
// metadata version).

// SyncGroup answers with the member's current assignment: the partitions of
// its active tasks and an AssignmentInfo at its own version. Assignments a
// member sends are ignored; the streams group assigns.
func (t *Translator) SyncGroup(req *kmsg.SyncGroupRequest, respond func(*kmsg.SyncGroupResponse), forward Forward) {
	r := streams.ClassicSyncRequest{GroupID: req.Group, MemberID: req.MemberID, Generation: req.Generation, ProtocolType: req.ProtocolType, ProtocolName: req.Protocol}
	if req.InstanceID != nil {
		r.InstanceID = *req.InstanceID
	}
	t.c.ClassicSyncGroup(r, func(res streams.ClassicSyncResult) {
		if errors.Is(res.Err, streams.ErrClassicNotServed) {
			forward(nil, nil)
			return
		}
		resp := kmsg.NewPtrSyncGroupResponse()
		resp.Version = req.Version
		if res.Err != nil {
			code, _ := errorCode(res.Err)
			resp.ErrorCode = code
			resp.MemberAssignment = []byte{}
			respond(resp)
			return
		}
		pt, pn := streams.ClassicProtocolType, streams.ClassicProtocolName
		resp.ProtocolType, resp.Protocol = &pt, &pn
		resp.MemberAssignment = res.Assignment
		respond(resp)
	})
}
