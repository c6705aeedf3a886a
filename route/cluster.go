package route

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/proxy/peer"
)

// Cluster is the ownership of groups among the streamshift instances that
// share one group log (package cluster's Runtime implements it over the
// upstream instance group, the coordinator's Partitions and the links
// between the instances; route never imports cluster): one
// instance, the owner of the group's log partition, serves a group. A
// request of one group reaching another instance goes to the owner over
// the instances' links (a serve call, docs/one-address.md §4), so a client
// may reach the group through any instance.
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
	// Owner is the owner of the group's log partition in this instance's
	// map: this instance (self) or the peer of that proxy id, and the
	// map's generation; ok is false while nobody owns it (it moves).
	Owner(group string) (self bool, peer string, gen int32, ok bool)
	// Hops says whether requests hop to their owner: every instance of
	// the map has an internal address. While one has none (an earlier
	// release during an upgrade) the instances route as that release
	// does: NOT_COORDINATOR to host-routed clients, and FindCoordinator
	// names the owner's host.
	Hops() bool
	// Forward sends the request to peer as a serve call routed by the
	// group's partition and the map generation gen, and returns the
	// peer's response frame (header and body). Its error carries the
	// envelope's code (peer.ErrorCode).
	Forward(ctx context.Context, peer, group string, gen int32, req *proxy.Request, timeout time.Duration) ([]byte, error)
	// ForwardTimeout is cluster.forward-timeout: how long a request
	// waits on its owner (a held JoinGroup or SyncGroup longer).
	ForwardTimeout() time.Duration
	// Peers is the other instances of the map, by proxy id.
	Peers() []string
	// ServedGroups asks peer for the groups it serves (a served-groups
	// call for req's client, whose ListGroups needs them), unfiltered.
	// Its error carries the envelope's code (peer.ErrorCode).
	ServedGroups(ctx context.Context, peer string, req *proxy.Request, timeout time.Duration) ([]kmsg.ListGroupsResponseGroup, error)
}

// Retries of a serve call the owner refused with NOT_COORDINATOR (it did
// nothing), each once the map names another owner; and how often the
// origin looks at its map meanwhile.
const (
	maxReroutes   = 2
	rerouteWait   = 5 * time.Second
	reroutePeriod = 50 * time.Millisecond
)

// clusterError is an answer of the cluster's with its own message.
type clusterError struct {
	code *kerr.Error
	msg  string
}

func (e *clusterError) Error() string { return e.msg }
func (e *clusterError) Unwrap() error { return e.code }

func noOwner(group string) error {
	return &clusterError{kerr.CoordinatorNotAvailable, fmt.Sprintf("group %s: no streamshift instance owns its log partition right now", group)}
}

// forward sends a request to the group's owner and answers the client with
// the owner's response frame. An owner that refused it (envelope
// NOT_COORDINATOR: it did nothing) is left for the owner the map names
// next, at most maxReroutes times within the request's deadline; a
// timeout, a lost link or a busy owner is answered and never sent again
// (docs/one-address.md §6 rule 3).
func (rs *Routes) forward(req *proxy.Request, out proxy.Outcome, serve proxy.InterceptorFunc, refuse func(kmsg.Request, error) kmsg.Response, group, owner string, gen int32) {
	c := rs.o.Cluster
	fr, ok := out.(proxy.FrameResponder)
	if !ok {
		refuseDecoded(req, out, refuse, &clusterError{kerr.CoordinatorNotAvailable, fmt.Sprintf("group %s: owned by streamshift instance %s, and this connection cannot take its answer", group, owner)})
		return
	}
	deadline := time.Now().Add(forwardTimeout(req, c.ForwardTimeout()))
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		data, err := c.Forward(ctx, owner, group, gen, req, time.Until(deadline))
		cancel()
		if err == nil {
			fr.RespondFrame(data)
			return
		}
		if peer.ErrorCode(err) != kerr.NotCoordinator.Code {
			refuseDecoded(req, out, refuse, peerFailure("group "+group, owner, err))
			return
		}
		self, next, ngen, moved := rs.nextOwner(group, owner, gen, deadline)
		if attempt == maxReroutes || !moved {
			refuseDecoded(req, out, refuse, &clusterError{kerr.NotCoordinator, fmt.Sprintf("group %s: streamshift instance %s does not serve it (its log partition moves)", group, owner)})
			return
		}
		if self {
			if err := c.Serving(group); err != nil {
				refuseDecoded(req, out, refuse, err)
				return
			}
			serve(req, out)
			return
		}
		owner, gen = next, ngen
	}
}

// nextOwner waits until the map names an owner other than was (or this
// instance), at most rerouteWait and not beyond deadline.
func (rs *Routes) nextOwner(group, was string, gen int32, deadline time.Time) (self bool, next string, ngen int32, moved bool) {
	until := deadline
	if d := time.Now().Add(rerouteWait); d.Before(deadline) {
		until = d
	}
	for {
		self, next, ngen, ok := rs.o.Cluster.Owner(group)
		if ok && (self || next != was) {
			return self, next, ngen, true
		}
		if !time.Now().Add(reroutePeriod).Before(until) {
			return false, "", 0, false
		}
		time.Sleep(reroutePeriod)
	}
}

// forwardTimeout is how long a request waits on its owner: a JoinGroup the
// rebalance timeout and 5 s, what the Java client itself waits; a
// SyncGroup (held until the leader syncs) at least 35 s; the rest the
// cluster's forward timeout. A SyncGroup's is its key's, so one hopped
// undecoded (hop.go) waits as long.
func forwardTimeout(req *proxy.Request, d time.Duration) time.Duration {
	if req.Key == int16(kmsg.SyncGroup) {
		return max(d, syncWait)
	}
	if r, ok := req.Body.(*kmsg.JoinGroupRequest); ok {
		t := r.RebalanceTimeoutMillis
		if r.Version == 0 {
			t = r.SessionTimeoutMillis
		}
		return time.Duration(t)*time.Millisecond + 5*time.Second
	}
	return d
}

// refuseDecoded answers req with its key's refusal of err, decoding the
// body first if a hop had not (a refusal names the request's entries); a
// body that does not decode closed the connection instead.
func refuseDecoded(req *proxy.Request, out proxy.Outcome, refuse func(kmsg.Request, error) kmsg.Response, err error) {
	if req.Decode() != nil {
		return
	}
	out.Respond(refuse(req.Body, err))
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
