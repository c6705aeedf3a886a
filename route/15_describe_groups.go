package route

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

// describeGroups answers DescribeGroups for owned groups as Kafka 4.4 answers
// it for a streams group (DescribeGroups only describes classic groups):
// GROUP_ID_NOT_FOUND "Group <id> is not a classic group." from v6, state Dead
// before. Other groups go upstream; a mixed request is split and the answers
// merged in request order.
func (rs *Routes) describeGroups(req *proxy.Request, out proxy.Outcome) {
	r := req.Body.(*kmsg.DescribeGroupsRequest)
	owned := make([]bool, len(r.Groups))
	var upstream []string
	for i, g := range r.Groups {
		if owned[i] = rs.o.Coordinator.Owns(g); !owned[i] {
			upstream = append(upstream, g)
		}
	}
	if len(upstream) == len(r.Groups) {
		out.Forward()
		return
	}
	merge := func(up []kmsg.DescribeGroupsResponseGroup) []kmsg.DescribeGroupsResponseGroup {
		local := func(i int) (kmsg.DescribeGroupsResponseGroup, bool) {
			if !owned[i] {
				return kmsg.DescribeGroupsResponseGroup{}, false
			}
			return streamsGroupDescribed(r.Groups[i], req.Version), true
		}
		return mergeByID(r.Groups, local, up, func(g kmsg.DescribeGroupsResponseGroup) string { return g.Group })
	}
	if len(upstream) == 0 {
		resp := kmsg.NewPtrDescribeGroupsResponse()
		resp.Groups = merge(nil)
		out.Respond(resp)
		return
	}
	fwd := *r
	fwd.Groups = upstream
	out.ForwardRewritten(&fwd, req.Version, func(resp kmsg.Response) kmsg.Response {
		dr := resp.(*kmsg.DescribeGroupsResponse)
		dr.Groups = merge(dr.Groups)
		return dr
	})
}

// streamsGroupDescribed is Kafka's DescribeGroups entry of a streams group.
func streamsGroupDescribed(id string, version int16) kmsg.DescribeGroupsResponseGroup {
	g := kmsg.NewDescribeGroupsResponseGroup()
	g.Group = id
	if version >= 6 {
		g.ErrorCode = kerr.GroupIDNotFound.Code
		msg := fmt.Sprintf("Group %s is not a classic group.", id)
		g.ErrorMessage = &msg
	} else {
		g.State = "Dead"
	}
	return g
}
