package route

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

// DeleteGroups (key 42): v0-v3 (the upstream's range, capped to kmsg's),
// unadvertised.
//
// By version: the same at every version (v2+ is flexible): owned groups
// are deleted here, the rest goes upstream.

// deleteGroups routes DeleteGroups at the upstream's versions (capped to
// what kmsg decodes), unadvertised. It deletes owned groups as Kafka deletes
// a streams group:
// NON_EMPTY_GROUP unless it is Empty; otherwise its state goes (tombstones in
// the group log), then its anchor leaves the upstream group, and the
// DeleteGroups forwarded for it deletes the committed offsets upstream. Other
// groups go upstream as they are; results come back in request order.
//
// With several instances, a request naming groups other instances own was
// split by owner first (clusterSplit): this handles the entries owned here.
func (rs *Routes) deleteGroups(req *proxy.Request, r *kmsg.DeleteGroupsRequest, out proxy.Outcome) {
	local := map[int]kmsg.DeleteGroupsResponseGroup{}
	deleted := map[string]bool{}
	var upstream []string
	// An owned group the client may not DELETE goes upstream untouched,
	// which refuses it with Kafka's GROUP_AUTHORIZATION_FAILED
	// (authorize.go).
	// Each group's queue is asked once (Owns), as in DescribeGroups.
	var ownedIDs []string
	owned := map[string]bool{}
	for _, id := range r.Groups {
		if rs.o.Coordinator.Owns(id) {
			ownedIDs = append(ownedIDs, id)
			owned[id] = true
		}
	}
	denied := rs.groupsDenied(req, kmsg.ACLOperationDelete, ownedIDs)
	for i, id := range r.Groups {
		if !owned[id] || denied[id] {
			upstream = append(upstream, id)
			continue
		}
		if err := rs.deleteOwned(req, id); err != nil {
			g := kmsg.NewDeleteGroupsResponseGroup()
			g.Group = id
			g.ErrorCode = kafkaCode(err)
			local[i] = g
			continue
		}
		deleted[id] = true
		upstream = append(upstream, id)
	}
	rest := func() kmsg.Request {
		fwd := *r
		fwd.Groups = upstream
		return &fwd
	}
	// A deleted group counts as answered here: its DeleteGroups goes
	// upstream only to delete its offsets, and the answer is adjusted.
	splitForward(req, out, len(local)+len(deleted), len(upstream), rest, req.Version, func(dr *kmsg.DeleteGroupsResponse) *kmsg.DeleteGroupsResponse {
		for i := range dr.Groups {
			if deleted[dr.Groups[i].Group] && dr.Groups[i].ErrorCode == kerr.GroupIDNotFound.Code {
				// The group never committed offsets upstream: deleting our
				// state was all there was to do.
				dr.Groups[i].ErrorCode = 0
			}
		}
		byLocal := func(i int) (kmsg.DeleteGroupsResponseGroup, bool) { g, ok := local[i]; return g, ok }
		dr.Groups = mergeByID(r.Groups, byLocal, dr.Groups, func(g kmsg.DeleteGroupsResponseGroup) string { return g.Group })
		return dr
	})
}

// deleteOwned deletes an owned group's state and makes its anchor leave.
// The coordinator always answers (a closing coordinator answers queued work
// COORDINATOR_NOT_AVAILABLE), so only the client going away ends the wait
// early.
func (rs *Routes) deleteOwned(req *proxy.Request, id string) error {
	done := make(chan error, 1)
	rs.o.Coordinator.DeleteGroup(id, func(err error) { done <- err })
	select {
	case err := <-done:
		if err != nil {
			return err
		}
	case <-req.Done():
		return kerr.CoordinatorNotAvailable
	}
	// A failed leave is not reported here: the forwarded DeleteGroups then
	// finds the anchor still in the group and answers NON_EMPTY_GROUP, which
	// is what the client must see (its offsets are still there).
	rs.leaveAnchor(id)
	return nil
}
