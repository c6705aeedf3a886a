package route

import (
	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
	"github.com/streamshift/streamshift/internal/kafkautf8"
	"github.com/streamshift/streamshift/proxy"
)

// A request of a group another instance owns goes to that owner as the
// client's bytes, decoded only there (issue #43, item 3): for the keys
// whose body opens with the group (hopKeys), the proxy hands the request
// to hopUndecoded before decoding it, which reads the group from the bytes
// and, when the map names another owner, forwards it as the gate would.
// Everything else (the group owned here, nobody owning it, a mixed
// release, bytes that give no group) goes on to the key's route decoded,
// whose gate decides again from the same map.

// hopKeys are the gated keys whose body's first field is the group and
// whose forward needs nothing else of the body (a JoinGroup's wait is its
// rebalance timeout, so it is decoded first). The heartbeats are most of a
// fleet's traffic (issue #43).
var hopKeys = map[kmsg.Key]bool{
	kmsg.OffsetCommit:          true,
	kmsg.Heartbeat:             true,
	kmsg.LeaveGroup:            true,
	kmsg.SyncGroup:             true,
	kmsg.StreamsGroupHeartbeat: true,
}

// hopUndecoded is the hop (proxy.RegisterHop) of row rt, whose registered
// handler is routed.
func (rs *Routes) hopUndecoded(rt route, routed proxy.InterceptorFunc) proxy.Hop {
	return func(req *proxy.Request, out proxy.Outcome) bool {
		c := rs.o.Cluster
		if req.Client.Remote() || !c.Hops() {
			return false
		}
		if _, ok := out.(proxy.FrameResponder); !ok {
			return false
		}
		group, ok := leadingGroup(req.Key, req.Version, req.RawBody())
		if !ok {
			return false
		}
		self, peer, gen, owned := c.Owner(group)
		if !owned || self {
			return false
		}
		// Moved here meanwhile: the route serves it, decoded.
		serve := func(req *proxy.Request, out proxy.Outcome) {
			if req.Decode() == nil {
				routed(req, out)
			}
		}
		rs.forward(req, out, serve, rt.refuse, group, peer, gen)
		return true
	}
}

// leadingGroup is the group a body of key at version opens with, as Kafka
// reads the string; false when the bytes give none (too short, or the
// empty group, which the route answers).
func leadingGroup(key, version int16, body []byte) (string, bool) {
	flexible, known := kafkaframe.RequestFlexible(key, version)
	if !known {
		return "", false
	}
	r := kbin.Reader{Src: body}
	var group string
	if flexible {
		group = r.CompactString()
	} else {
		group = r.String()
	}
	if !r.Ok() || group == "" {
		return "", false
	}
	return kafkautf8.Decode(group), true
}
