package route

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

// ConsumerGroupDescribe (key 69): v0-v1 (what kmsg decodes), advertised
// whatever the upstream speaks; forwarded at the upstream's newest version
// when the client's is newer.
//
// Kafka's admin client (4.x) describes a consumer group with
// ConsumerGroupDescribe first; a group that is not a KIP-848 consumer
// group is answered GROUP_ID_NOT_FOUND, and the client retries with
// DescribeGroups, keeping the first answer's message if DescribeGroups
// also says GROUP_ID_NOT_FOUND (a streams group's). So
// `kafka-consumer-groups --describe` of a streams group prints Kafka 4.4's
// "Group <id> is not a consumer group." only if this key is answered: an
// upstream without it (before 4.0, or without the consumer protocol)
// would leave the client with DescribeGroups alone.
//
// By version: v1 adds the member type (classic or consumer) to each member;
// no member is described here.

// consumerGroupDescribe answers ConsumerGroupDescribe. A group the client
// may not DESCRIBE goes upstream, or is answered GROUP_AUTHORIZATION_FAILED
// when the upstream lacks the key; a streams group served here is answered
// as Kafka 4.4 answers it: GROUP_ID_NOT_FOUND "Group <id> is not a consumer
// group.". Other groups go upstream when it speaks the key, and are
// answered the same GROUP_ID_NOT_FOUND when it does not: no group is a
// consumer group there, and the client goes on to DescribeGroups.
func (rs *Routes) consumerGroupDescribe(req *proxy.Request, r *kmsg.ConsumerGroupDescribeRequest, out proxy.Outcome) {
	upstreamHasKey := rs.upstreamSpeaks(kmsg.ConsumerGroupDescribe.Int16())
	if !upstreamHasKey {
		denied := rs.groupsDenied(req, kmsg.ACLOperationDescribe, r.Groups)
		resp := kmsg.NewPtrConsumerGroupDescribeResponse()
		for _, g := range r.Groups {
			if denied[g] {
				resp.Groups = append(resp.Groups, consumerGroupNotDescribed(g, kerr.GroupAuthorizationFailed, "The group is not authorized."))
				continue
			}
			resp.Groups = append(resp.Groups, consumerGroupNotDescribed(g, kerr.GroupIDNotFound, fmt.Sprintf("Group %s is not a consumer group.", g)))
		}
		out.Respond(resp)
		return
	}
	// The upstream's newest version may be older (v0 on 3.9): v1 only adds
	// the members' type.
	describeHereOrUpstream(rs, req, out, r.Groups,
		func(upstream []string) kmsg.Request {
			fwd := *r
			fwd.Groups = upstream
			return &fwd
		},
		func(i int) kmsg.ConsumerGroupDescribeResponseGroup {
			return consumerGroupNotDescribed(r.Groups[i], kerr.GroupIDNotFound, fmt.Sprintf("Group %s is not a consumer group.", r.Groups[i]))
		},
		func(dr *kmsg.ConsumerGroupDescribeResponse) *[]kmsg.ConsumerGroupDescribeResponseGroup {
			return &dr.Groups
		},
		func(g kmsg.ConsumerGroupDescribeResponseGroup) string { return g.Group })
}

// consumerGroupNotDescribed is a ConsumerGroupDescribe entry of a group
// answered with err and its message.
func consumerGroupNotDescribed(id string, err *kerr.Error, msg string) kmsg.ConsumerGroupDescribeResponseGroup {
	g := kmsg.NewConsumerGroupDescribeResponseGroup()
	g.Group, g.ErrorCode, g.ErrorMessage = id, err.Code, &msg
	g.AuthorizedOperations = -2147483648 // not requested, as Kafka leaves it
	return g
}

// upstreamSpeaks reports whether the upstream's ApiVersions listed key
// (without them, it is assumed to speak every key kmsg knows).
func (rs *Routes) upstreamSpeaks(key int16) bool {
	if len(rs.o.UpstreamMaxVersions) == 0 {
		return true
	}
	_, ok := rs.o.UpstreamMaxVersions[key]
	return ok
}
