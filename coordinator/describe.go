package coordinator

import (
	"sort"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// StreamsGroupDescribe serves one describe: each group is read on its own
// queue, and respond is called once all are read.
func (c *Coordinator) StreamsGroupDescribe(req *kmsg.StreamsGroupDescribeRequest, respond func(*kmsg.StreamsGroupDescribeResponse)) {
	resp := kmsg.NewPtrStreamsGroupDescribeResponse()
	resp.Version = req.Version
	resp.Groups = make([]kmsg.StreamsGroupDescribeResponseGroup, len(req.Groups))
	if len(req.Groups) == 0 {
		respond(resp)
		return
	}
	var remaining atomic.Int32
	remaining.Store(int32(len(req.Groups)))
	done := func() {
		if remaining.Add(-1) == 0 {
			respond(resp)
		}
	}
	// Kafka answers the invalid group ids first, then the groups it looked
	// up, each in request order.
	ids := make([]string, 0, len(req.Groups))
	i := 0
	for _, id := range req.Groups {
		if id == "" {
			// Kafka gives no message here.
			resp.Groups[i] = kmsg.NewStreamsGroupDescribeResponseGroup()
			resp.Groups[i].ErrorCode = kerr.InvalidGroupID.Code
			i++
			done()
			continue
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		slot := i
		i++
		c.run(id, func(s *shard) {
			resp.Groups[slot] = c.describeGroup(s, req)
			done()
		}, func(e *streams.CoordError) {
			resp.Groups[slot] = streams.DescribeError(id, e)
			done()
		})
	}
}

func (c *Coordinator) describeGroup(s *shard, req *kmsg.StreamsGroupDescribeRequest) kmsg.StreamsGroupDescribeResponseGroup {
	g := s.group
	if g == nil {
		return streams.DescribeError(s.id, streams.Errorf(kerr.GroupIDNotFound, "Group %s not found.", s.id))
	}
	out := kmsg.NewStreamsGroupDescribeResponseGroup()
	out.Group = g.ID
	out.State = g.State().String()
	out.Epoch = g.GroupEpoch
	out.AssignmentEpoch = g.AssignmentEpoch
	if req.Version >= 1 {
		name := c.assignor.Name()
		out.AssignorName = &name
		out.TopologyDescriptionStatus = streams.TopologyDescriptionNotRequested
		if req.IncludeTopologyDescription {
			// Topology descriptions (API 93) are not stored by streamshift.
			out.TopologyDescriptionStatus = streams.TopologyDescriptionNotStored
		}
	}
	if g.Topology != nil {
		out.Topology = streams.DescribeTopology(g.Topology, c.describeConfigured(g))
	}
	ids := make([]string, 0, len(g.Members))
	for id := range g.Members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out.Members = make([]kmsg.StreamsGroupDescribeResponseGroupMember, 0, len(ids))
	for _, id := range ids {
		out.Members = append(out.Members, streams.DescribeMember(g, g.Members[id]))
	}
	return out
}

// describeConfigured returns the configured topology for a describe,
// computing it (in memory, without creating topics) if it is stale.
func (c *Coordinator) describeConfigured(g *streams.Group) *streams.ConfiguredTopology {
	img := c.metadata.Image()
	mem := &g.Mem
	if mem.Configured == nil || mem.ConfiguredFor != g.Topology || mem.ConfiguredVersion != img.Version() {
		return &streams.ConfiguredTopology{ConfiguredTopology: c.configure(*g.Topology, streams.ImagePartitions(img))}
	}
	return mem.Configured
}
