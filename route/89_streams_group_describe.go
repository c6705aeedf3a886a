package route

import (
	"fmt"

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
		out.Respond(dr)
	}
	if !rs.o.Coordinator.Handle(&fwd, coordinatorClient(req), respond) {
		out.Forward()
	}
}
