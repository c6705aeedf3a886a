package route

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

// StreamsGroupDescribe (key 89): v0-v1, advertised whatever the upstream
// speaks.
//
// By version: v1 adds IncludeTopologyDescription to the request, and
// TopologyDescription, TopologyDescriptionStatus (NOT_REQUESTED or
// NOT_STORED: none is stored) and AssignorName to each group's answer.

// streamsGroupDescribe serves StreamsGroupDescribe v0-v1, advertised
// whatever the upstream knows, from the coordinator, for every group:
// the coordinator answers for a group it does not hold as Kafka does.
// Groups the client may not DESCRIBE are answered GROUP_AUTHORIZATION_FAILED
// first, and a group whose topology names a topic the client may not
// DESCRIBE is hidden, as Kafka 4.4 does (authorize_streams.go).
// Handle takes every request of this key; Forward is only the answer to a
// request it would not take.
//
// With several instances, a request naming groups other instances own was
// split by owner first (clusterSplit), or went to the one owner
// (clusterGate).
func (rs *Routes) streamsGroupDescribe(req *proxy.Request, r *kmsg.StreamsGroupDescribeRequest, out proxy.Outcome) {
	allowed, denied, err := rs.streamsDescribeDenied(req, r.Groups)
	if err != nil {
		out.Respond(notServed(r, fmt.Errorf("%w: %w", kerr.CoordinatorNotAvailable, err)))
		return
	}
	if len(allowed) == 0 && len(denied) > 0 {
		resp := kmsg.NewPtrStreamsGroupDescribeResponse()
		resp.Groups = denied
		out.Respond(resp)
		return
	}
	fwd := *r
	fwd.Groups = allowed
	respond := func(resp kmsg.Response) {
		dr, ok := resp.(*kmsg.StreamsGroupDescribeResponse)
		if !ok {
			out.Respond(resp)
			return
		}
		if err := rs.hideUnauthorizedTopologies(req, dr); err != nil {
			out.Respond(notServed(r, fmt.Errorf("%w: %w", kerr.CoordinatorNotAvailable, err)))
			return
		}
		dr.Groups = append(denied, dr.Groups...)
		if notHere := notFoundHere(dr); len(notHere) > 0 {
			// The upstream's answer is waited for off the coordinator's
			// executor.
			go func() {
				rs.notStreamsGroups(req, dr, notHere)
				out.Respond(dr)
			}()
			return
		}
		out.Respond(dr)
	}
	if !rs.o.Coordinator.Handle(&fwd, coordinatorClient(req), respond) {
		out.Forward()
	}
}

// notFoundHere are the entries of dr the coordinator answered "Group <id>
// not found." (it holds no such group), by group id.
func notFoundHere(dr *kmsg.StreamsGroupDescribeResponse) map[string]int {
	var out map[string]int
	for i, g := range dr.Groups {
		if g.ErrorCode == kerr.GroupIDNotFound.Code && g.ErrorMessage != nil && *g.ErrorMessage == fmt.Sprintf("Group %s not found.", g.Group) {
			if out == nil {
				out = map[string]int{}
			}
			out[g.Group] = i
		}
	}
	return out
}

// notStreamsGroupWait bounds the upstream's DescribeGroups of groups the
// coordinator does not hold.
const notStreamsGroupWait = 5 * time.Second

// notStreamsGroups answers a group the coordinator does not hold that the
// upstream has (a classic group: one under migration before its takeover
// or after its hand-back) as Kafka 4.4 answers StreamsGroupDescribe for a
// group of another type: GROUP_ID_NOT_FOUND "Group <id> is not a streams
// group." (kafka-streams-groups prints it), not "Group <id> not found.".
// It asks the upstream with DescribeGroups on the client's connection (the
// client's principal, its coordinator); an upstream that does not answer,
// or answers with an error or a Dead group, leaves "not found".
func (rs *Routes) notStreamsGroups(req *proxy.Request, dr *kmsg.StreamsGroupDescribeResponse, notHere map[string]int) {
	ask := kmsg.NewPtrDescribeGroupsRequest()
	for id := range notHere {
		ask.Groups = append(ask.Groups, id)
	}
	ctx, cancel := context.WithTimeout(context.Background(), notStreamsGroupWait)
	defer cancel()
	resp, err := req.Send(ask, rs.upstreamMax(kmsg.DescribeGroups.Int16())).Wait(ctx)
	if err != nil {
		rs.o.Log.Debug().Err(err).Strs("groups", ask.Groups).Msg("StreamsGroupDescribe: the upstream's DescribeGroups of groups not served here")
		return
	}
	described, ok := resp.(*kmsg.DescribeGroupsResponse)
	if !ok {
		return
	}
	for _, g := range described.Groups {
		i, ok := notHere[g.Group]
		if !ok || g.ErrorCode != 0 || g.State == "Dead" {
			continue
		}
		msg := fmt.Sprintf("Group %s is not a streams group.", g.Group)
		dr.Groups[i].ErrorMessage = &msg
	}
}
