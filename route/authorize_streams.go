package route

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

// authorizeStreamsHeartbeat checks a StreamsGroupHeartbeat as Kafka 4.4's
// KafkaApis.handleStreamsGroupHeartbeat does before the group coordinator
// sees it: READ on the group (GROUP_AUTHORIZATION_FAILED, no message), then,
// with a topology, DESCRIBE on every topic it names (TOPIC_AUTHORIZATION_FAILED,
// no message). A topology naming Kafka-internal or invalid topics is left to
// the coordinator, which refuses it with STREAMS_INVALID_TOPOLOGY first, as
// Kafka does. The answer is nil when the heartbeat may go on.
func (rs *Routes) authorizeStreamsHeartbeat(req *proxy.Request, hb *kmsg.StreamsGroupHeartbeatRequest) *kmsg.StreamsGroupHeartbeatResponse {
	// Kafka's answers carry no message (getErrorResponse sets the code only).
	fail := func(code int16) *kmsg.StreamsGroupHeartbeatResponse {
		resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
		resp.SetVersion(hb.Version)
		resp.ErrorCode = code
		return resp
	}
	unknown := func(err error) *kmsg.StreamsGroupHeartbeatResponse {
		return heartbeatError(hb, fmt.Errorf("%w: %w", kerr.CoordinatorNotAvailable, err))
	}
	ok, err := rs.auth.allowed(req, kmsg.ACLResourceTypeGroup, kmsg.ACLOperationRead, hb.Group)
	if err != nil {
		return unknown(err)
	}
	if !ok {
		return fail(kerr.GroupAuthorizationFailed.Code)
	}
	topics := requiredTopics(hb.Topology)
	if len(topics) == 0 || !checkableTopics(topics) {
		return nil
	}
	denied, err := rs.auth.denied(req, kmsg.ACLResourceTypeTopic, kmsg.ACLOperationDescribe, topics)
	if err != nil {
		return unknown(err)
	}
	if len(denied) > 0 {
		return fail(kerr.TopicAuthorizationFailed.Code)
	}
	return nil
}

// requiredTopics are the topics of a topology Kafka 4.4 checks DESCRIBE on:
// source, repartition sink, repartition source and changelog topics.
func requiredTopics(t *kmsg.StreamsGroupHeartbeatRequestTopology) []string {
	if t == nil {
		return nil
	}
	var out []string
	for _, s := range t.Subtopologies {
		out = append(out, s.SourceTopics...)
		out = append(out, s.RepartitionSinkTopics...)
		for _, r := range s.RepartitionSourceTopics {
			out = append(out, r.Topic)
		}
		for _, c := range s.StateChangelogTopics {
			out = append(out, c.Topic)
		}
	}
	return dedupe(out)
}

// checkableTopics reports whether no topic is Kafka-internal or has an
// invalid name (Kafka's Topic.isInternal, Topic.isValid).
func checkableTopics(topics []string) bool {
	for _, t := range topics {
		switch t {
		case "__consumer_offsets", "__transaction_state", "__share_group_state", "", ".", "..":
			return false
		}
		if len(t) > 249 || strings.ContainsFunc(t, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-')
		}) {
			return false
		}
	}
	return true
}

// streamsDescribeDenied splits a StreamsGroupDescribe as Kafka 4.4's
// handleStreamsGroupDescribe does: groups the client may not DESCRIBE are
// answered GROUP_AUTHORIZATION_FAILED (first in the response, as Kafka adds
// them first); the others are returned for the coordinator.
func (rs *Routes) streamsDescribeDenied(req *proxy.Request, groups []string) (allowed []string, deniedGroups []kmsg.StreamsGroupDescribeResponseGroup, err error) {
	denied, err := rs.auth.denied(req, kmsg.ACLResourceTypeGroup, kmsg.ACLOperationDescribe, groups)
	if err != nil {
		return nil, nil, err
	}
	no := map[string]bool{}
	for _, g := range denied {
		no[g] = true
	}
	for _, g := range groups {
		if no[g] {
			dg := kmsg.NewStreamsGroupDescribeResponseGroup()
			dg.Group = g
			dg.ErrorCode = kerr.GroupAuthorizationFailed.Code
			deniedGroups = append(deniedGroups, dg)
			continue
		}
		allowed = append(allowed, g)
	}
	return allowed, deniedGroups, nil
}

// hideUnauthorizedTopologies replaces every described group whose topology
// names a topic the client may not DESCRIBE, as Kafka 4.4 does when an
// authorizer is configured ("Clients are not allowed to see topics that are
// not authorized for Describe").
func (rs *Routes) hideUnauthorizedTopologies(req *proxy.Request, resp *kmsg.StreamsGroupDescribeResponse) error {
	var topics []string
	groupTopics := make([][]string, len(resp.Groups))
	for i, g := range resp.Groups {
		if g.Topology == nil {
			continue
		}
		for _, s := range g.Topology.Subtopologies {
			groupTopics[i] = append(groupTopics[i], s.SourceTopics...)
			groupTopics[i] = append(groupTopics[i], s.RepartitionSinkTopics...)
			for _, r := range s.RepartitionSourceTopics {
				groupTopics[i] = append(groupTopics[i], r.Topic)
			}
			for _, c := range s.StateChangelogTopics {
				groupTopics[i] = append(groupTopics[i], c.Topic)
			}
		}
		topics = append(topics, groupTopics[i]...)
	}
	if len(topics) == 0 {
		return nil
	}
	denied, err := rs.auth.denied(req, kmsg.ACLResourceTypeTopic, kmsg.ACLOperationDescribe, topics)
	if err != nil {
		return fmt.Errorf("describe topics of the groups: %w", err)
	}
	if len(denied) == 0 {
		return nil
	}
	no := map[string]bool{}
	for _, t := range denied {
		no[t] = true
	}
	for i, ts := range groupTopics {
		for _, t := range ts {
			if no[t] {
				g := kmsg.NewStreamsGroupDescribeResponseGroup()
				g.Group = resp.Groups[i].Group
				g.ErrorCode = kerr.TopicAuthorizationFailed.Code
				msg := "The described group uses topics that the client is not authorized to describe."
				g.ErrorMessage = &msg
				g.Members = []kmsg.StreamsGroupDescribeResponseGroupMember{}
				resp.Groups[i] = g
				break
			}
		}
	}
	return nil
}
