package route

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/proxy"
)

// OffsetDelete (key 47): v0, the only version, unadvertised.

// offsetDelete routes OffsetDelete at the upstream's versions (capped to what
// kmsg decodes), unadvertised. It answers GROUP_SUBSCRIBED_TO_TOPIC for every partition of a
// source (or repartition-source) topic of a non-empty owned group, as Kafka
// does for a streams group, and forwards the rest of the request. Offsets
// live upstream, so deleting them is always the upstream's work.
func (rs *Routes) offsetDelete(req *proxy.Request, r *kmsg.OffsetDeleteRequest, out proxy.Outcome) {
	sum, ok := rs.o.Coordinator.Summary(r.Group)
	if !ok {
		out.Forward()
		return
	}
	// Kafka checks DELETE on the group first: a client that may not goes
	// upstream untouched and is refused there, before the anchor leaves
	// (authorize.go).
	if rs.groupsDenied(req, kmsg.ACLOperationDelete, []string{r.Group})[r.Group] {
		out.Forward()
		return
	}
	if sum.State == streams.GroupEmpty {
		// Kafka deletes any offset of an Empty streams group. Upstream the
		// anchor member still holds the group, subscribed to the source
		// topics, so the broker would refuse: the anchor leaves first (the
		// next member's heartbeat brings it back).
		go func() {
			rs.leaveAnchor(r.Group)
			out.Forward()
		}()
		return
	}
	var refused []kmsg.OffsetDeleteResponseTopic
	var upstream []kmsg.OffsetDeleteRequestTopic
	for _, t := range r.Topics {
		if !sum.SourceTopics[t.Topic] {
			upstream = append(upstream, t)
			continue
		}
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, kerr.GroupSubscribedToTopic.Code
			rt.Partitions = append(rt.Partitions, rp)
		}
		refused = append(refused, rt)
	}
	rest := func() kmsg.Request {
		fwd := *r
		fwd.Topics = upstream
		return &fwd
	}
	splitForward(req, out, len(refused), len(upstream), rest, req.Version, func(or *kmsg.OffsetDeleteResponse) *kmsg.OffsetDeleteResponse {
		// A group-level error (say, the group is gone upstream) answers
		// the whole request, as Kafka's does.
		if or.ErrorCode == 0 {
			or.Topics = append(or.Topics, refused...)
		}
		return or
	})
}
