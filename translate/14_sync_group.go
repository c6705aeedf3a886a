package translate

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
)

// SyncGroup answers with the member's current assignment: the partitions of
// its active tasks and an AssignmentInfo at its own version. Assignments a
// member sends are ignored; the streams group assigns.
func (t *Translator) SyncGroup(req *kmsg.SyncGroupRequest, client coordinator.ClientInfo, respond func(*kmsg.SyncGroupResponse), forward Forward) {
	r := coordinator.ClassicSyncRequest{GroupID: req.Group, MemberID: req.MemberID, Generation: req.Generation, ProtocolType: req.ProtocolType, ProtocolName: req.Protocol, Client: client}
	if req.InstanceID != nil {
		r.InstanceID = *req.InstanceID
	}
	t.c.ClassicSyncGroup(r, func(res coordinator.ClassicSyncResult) {
		if errors.Is(res.Err, coordinator.ErrClassicNotServed) {
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
		pt, pn := coordinator.ClassicProtocolType, coordinator.ClassicProtocolName
		resp.ProtocolType, resp.Protocol = &pt, &pn
		resp.MemberAssignment = res.Assignment
		respond(resp)
	})
}
