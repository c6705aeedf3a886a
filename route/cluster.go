package route

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

// Cluster is the ownership of groups among the streamshift instances that
// share one group log (cmd/streamshift wires the upstream instance group
// and the coordinator's Partitions): one instance, the owner of the group's
// log partition, serves a group; the others answer its group requests
// NOT_COORDINATOR, which every Kafka client answers by finding the
// coordinator again (FindCoordinator, which every instance answers with the
// owner's host).
type Cluster interface {
	// Serving is nil if this instance serves the group now, else an error
	// carrying NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS.
	Serving(group string) error
	// Coordinator is the coordinator FindCoordinator names for the group,
	// whose upstream coordinator is node: the advertised host of the
	// instance owning the group and the node id to name (node, or with
	// several instances an id of that instance's own: Java clients key
	// their connections by node id, so the group's coordinator must not
	// share an id with the node's connection to another instance). False
	// while nobody owns the group (its partition moves).
	Coordinator(group string, node int32) (host string, id int32, ok bool)
}

// clusterGate wraps a group route: a request for a group this instance
// does not serve is answered with the cluster's error at once, before the
// migration gate, the coordinator or the upstream see it. Requests naming
// no single group (a batched OffsetFetch of an admin tool) pass: they go
// upstream or to the coordinator as before. So do the classic group keys
// and offsets of clients that are not host-routed (hostRouted): they reach
// this instance whatever FindCoordinator says, and their groups are the
// broker's (streamshift serves Kafka Streams, a Java client), so this
// instance forwards them as a single instance would. The streams keys are
// only ever this proxy's and are gated for every client.
func (rs *Routes) clusterGate(h handler) handler {
	if rs.o.Cluster == nil {
		return h
	}
	serve := h.serve
	h.serve = func(req *proxy.Request, out proxy.Outcome) {
		group, ok := gatedGroup(req.Body)
		if ok && !hostRouted(req.Client) && !streamsKey(req.Key) {
			ok = false
		}
		if ok {
			if err := rs.o.Cluster.Serving(group); err != nil {
				if resp := notServed(req.Body, err); resp != nil {
					out.Respond(resp)
					return
				}
			}
		}
		serve(req, out)
	}
	return h
}

// gatedGroup is the one group a group request is for.
func gatedGroup(req kmsg.Request) (string, bool) {
	var g string
	switch r := req.(type) {
	case *kmsg.StreamsGroupHeartbeatRequest:
		g = r.Group
	case *kmsg.StreamsGroupDescribeRequest:
		if len(r.Groups) != 1 {
			return "", false
		}
		g = r.Groups[0]
	case *kmsg.OffsetFetchRequest:
		if r.Version >= 8 && len(r.Groups) != 1 {
			return "", false
		}
		g = fetchedGroup(r)
	case *kmsg.JoinGroupRequest:
		g = r.Group
	case *kmsg.SyncGroupRequest:
		g = r.Group
	case *kmsg.HeartbeatRequest:
		g = r.Group
	case *kmsg.LeaveGroupRequest:
		g = r.Group
	case *kmsg.OffsetCommitRequest:
		g = r.Group
	case *kmsg.TxnOffsetCommitRequest:
		g = r.Group
	}
	return g, g != ""
}

// notServed is the answer to a group request of a group this instance
// does not serve, with err's code where the key carries it.
func notServed(req kmsg.Request, err error) kmsg.Response {
	code := kafkaCode(err)
	msg := err.Error()
	switch r := req.(type) {
	case *kmsg.StreamsGroupHeartbeatRequest:
		return heartbeatError(r, err)
	case *kmsg.StreamsGroupDescribeRequest:
		resp := kmsg.NewPtrStreamsGroupDescribeResponse()
		for _, g := range r.Groups {
			dg := kmsg.NewStreamsGroupDescribeResponseGroup()
			dg.Group, dg.ErrorCode, dg.ErrorMessage = g, code, &msg
			resp.Groups = append(resp.Groups, dg)
		}
		return resp
	case *kmsg.OffsetCommitRequest:
		return offsetCommitAnswer(r, func(int, int) (int16, bool) { return code, true })
	case *kmsg.TxnOffsetCommitRequest:
		return txnOffsetCommitAnswer(r, func(int, int) (int16, bool) { return code, true })
	case *kmsg.OffsetFetchRequest:
		if r.Version >= 8 {
			return offsetFetchAll(r, err)
		}
		resp := kmsg.NewPtrOffsetFetchResponse()
		resp.ErrorCode = code
		return resp
	case *kmsg.JoinGroupRequest:
		resp := kmsg.NewPtrJoinGroupResponse()
		resp.ErrorCode, resp.Generation, resp.MemberID = code, -1, r.MemberID
		return resp
	case *kmsg.SyncGroupRequest:
		resp := kmsg.NewPtrSyncGroupResponse()
		resp.ErrorCode = code
		return resp
	case *kmsg.HeartbeatRequest:
		resp := kmsg.NewPtrHeartbeatResponse()
		resp.ErrorCode = code
		return resp
	case *kmsg.LeaveGroupRequest:
		resp := kmsg.NewPtrLeaveGroupResponse()
		resp.ErrorCode = code
		return resp
	}
	return nil
}

// hostRouted says whether a client connects to the coordinator
// FindCoordinator names by its host and port, so a group's requests reach
// the instance that owns it: the Java client (Kafka Streams, consumers,
// producers, admin) does, keying the connection by the node id named.
// franz-go and librdkafka look the coordinator up by node id in their
// Metadata, whose host is the instance they are connected to.
func hostRouted(c proxy.ClientInfo) bool { return c.SoftwareName == "apache-kafka-java" }

func streamsKey(key int16) bool {
	return key == int16(kmsg.StreamsGroupHeartbeat) || key == int16(kmsg.StreamsGroupDescribe)
}
