package route

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

// DescribeGroups (key 15): v0-v6 (what kmsg decodes), advertised whatever
// the upstream speaks: v6 (KIP-1043) only adds a per-group error message,
// so a client's v6 goes to an older upstream at its newest version and the
// answer comes back at v6. Kafka's 4.x admin client then sees what a 4.4
// broker answers for a streams group (with ConsumerGroupDescribe,
// 69_consumer_group_describe.go): `kafka-consumer-groups --describe` fails
// with "Group <id> is not a consumer group." as it does on Kafka 4.4,
// instead of reporting a Dead group ("does not exist").
//
// By version: an owned (streams) group is answered here with state Dead
// before v6, and GROUP_ID_NOT_FOUND "Group <id> is not a classic group."
// from v6 (which has per-group error messages), as Kafka 4.4 answers; other
// groups go upstream at the client's version, or the upstream's newest if
// older.

// describeGroups routes DescribeGroups at the upstream's versions (capped to
// what kmsg decodes), unadvertised. It answers for owned groups as Kafka 4.4 answers
// it for a streams group (DescribeGroups only describes classic groups):
// GROUP_ID_NOT_FOUND "Group <id> is not a classic group." from v6, state Dead
// before. Other groups go upstream; a mixed request is split and the answers
// merged in request order.
//
// With several instances, a request naming groups other instances own was
// split by owner first (clusterSplit): this handles the entries owned here.
func (rs *Routes) describeGroups(req *proxy.Request, r *kmsg.DescribeGroupsRequest, out proxy.Outcome) {
	// An owned group the client may not DESCRIBE goes upstream, which
	// refuses it with Kafka's GROUP_AUTHORIZATION_FAILED
	// (authorize.go).
	describeHereOrUpstream(rs, req, out, r.Groups,
		func(upstream []string) kmsg.Request {
			fwd := *r
			fwd.Groups = upstream
			return &fwd
		},
		func(i int) kmsg.DescribeGroupsResponseGroup { return streamsGroupDescribed(r.Groups[i], req.Version) },
		func(dr *kmsg.DescribeGroupsResponse) *[]kmsg.DescribeGroupsResponseGroup { return &dr.Groups },
		func(g kmsg.DescribeGroupsResponseGroup) string { return g.Group })
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
