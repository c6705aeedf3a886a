package route

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy/proxytest"
)

// serve runs the route of body's key on a request of conn, as the proxy
// runs an interceptor, and returns what the handler decided. body's
// version must be one the route serves.
func (e *env) serve(conn *proxytest.Conn, body kmsg.Request) proxytest.Result {
	e.t.Helper()
	for _, rt := range e.routes.active() {
		if int16(rt.key) != body.Key() {
			continue
		}
		if body.GetVersion() > rt.max {
			e.t.Fatalf("%s v%d: above the route's v%d, the proxy forwards it untouched", rt.key.Name(), body.GetVersion(), rt.max)
		}
		res, err := proxytest.Serve(rt.serve, conn.Request(body)).Wait(e.ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		if res.Extra != 0 {
			e.t.Fatalf("%s: the handler completed the request %d more times", rt.key.Name(), res.Extra)
		}
		return res
	}
	e.t.Fatalf("no route for key %d", body.Key())
	return proxytest.Result{}
}

// respond is serve for a request the handler must answer itself.
func respond[R kmsg.Response](e *env, conn *proxytest.Conn, body kmsg.Request) R {
	e.t.Helper()
	res := e.serve(conn, body)
	if res.Kind != proxytest.Responded {
		e.t.Fatalf("%s: %v (%s), want answered by the route", kmsg.NameForKey(body.Key()), res.Kind, res.Reason)
	}
	return res.Response.(R)
}

// rewritten is serve for a request the handler must forward rewritten:
// the broker answers what goes upstream with answer (nil: an empty response
// of the kind), and the client's answer is returned.
func rewritten[R kmsg.Response](e *env, conn *proxytest.Conn, body kmsg.Request, answer func(kmsg.Request) kmsg.Response) (kmsg.Request, R) {
	e.t.Helper()
	res := e.serve(conn, body)
	if res.Kind != proxytest.Rewritten {
		e.t.Fatalf("%s: %v (%s), want forwarded rewritten", kmsg.NameForKey(body.Key()), res.Kind, res.Reason)
	}
	var up kmsg.Response
	if answer != nil {
		up = answer(res.Request)
	} else {
		up = res.Request.ResponseKind()
	}
	got, err := res.Answer(up)
	if err != nil {
		e.t.Fatal(err)
	}
	return res.Request, got.(R)
}

// acl is a broker's authorizer for one principal, as the routes' probes
// (authorize.go) see it: denied says whether op on resource rt named
// name is refused. It answers only the probes; any other ask fails the
// test.
type acl func(rt kmsg.ACLResourceType, op kmsg.ACLOperation, name string) bool

// allowAll is the authorizer of a cluster without ACLs.
func allowAll(kmsg.ACLResourceType, kmsg.ACLOperation, string) bool { return false }

// conn is a client connection whose principal the broker authorizes by a.
func (e *env) conn(a acl) *proxytest.Conn {
	t := e.t
	return proxytest.NewConn(func(req kmsg.Request) (kmsg.Response, error) {
		code := func(rt kmsg.ACLResourceType, op kmsg.ACLOperation, name string, refused *kerr.Error, otherwise int16) int16 {
			if a(rt, op, name) {
				return refused.Code
			}
			return otherwise
		}
		switch r := req.(type) {
		case *kmsg.HeartbeatRequest: // READ on the group
			resp := r.ResponseKind().(*kmsg.HeartbeatResponse)
			resp.ErrorCode = code(kmsg.ACLResourceTypeGroup, kmsg.ACLOperationRead, r.Group, kerr.GroupAuthorizationFailed, kerr.UnknownMemberID.Code)
			return resp, nil
		case *kmsg.DescribeGroupsRequest: // DESCRIBE on groups
			resp := r.ResponseKind().(*kmsg.DescribeGroupsResponse)
			for _, g := range r.Groups {
				dg := kmsg.NewDescribeGroupsResponseGroup()
				dg.Group, dg.State = g, "Dead"
				dg.ErrorCode = code(kmsg.ACLResourceTypeGroup, kmsg.ACLOperationDescribe, g, kerr.GroupAuthorizationFailed, 0)
				if r.IncludeAuthorizedOperations && dg.ErrorCode == 0 { // as Kafka, the operations of groups described
					dg.AuthorizedOperations = 0
					for _, op := range []kmsg.ACLOperation{kmsg.ACLOperationRead, kmsg.ACLOperationDelete, kmsg.ACLOperationDescribe} {
						if !a(kmsg.ACLResourceTypeGroup, op, g) {
							dg.AuthorizedOperations |= 1 << int32(op)
						}
					}
				}
				resp.Groups = append(resp.Groups, dg)
			}
			return resp, nil
		case *kmsg.OffsetDeleteRequest: // DELETE on the group
			resp := r.ResponseKind().(*kmsg.OffsetDeleteResponse)
			resp.ErrorCode = code(kmsg.ACLResourceTypeGroup, kmsg.ACLOperationDelete, r.Group, kerr.GroupAuthorizationFailed, kerr.GroupIDNotFound.Code)
			return resp, nil
		case *kmsg.MetadataRequest: // DESCRIBE on topics
			resp := r.ResponseKind().(*kmsg.MetadataResponse)
			for _, mt := range r.Topics {
				rt := kmsg.NewMetadataResponseTopic()
				rt.Topic = mt.Topic
				rt.ErrorCode = code(kmsg.ACLResourceTypeTopic, kmsg.ACLOperationDescribe, deref(mt.Topic), kerr.TopicAuthorizationFailed, 0)
				resp.Topics = append(resp.Topics, rt)
			}
			return resp, nil
		case *kmsg.CreateTopicsRequest: // CREATE on topics
			if !r.ValidateOnly {
				t.Errorf("a CreateTopics that is not validate-only was asked on the client's connection")
			}
			resp := r.ResponseKind().(*kmsg.CreateTopicsResponse)
			for _, ct := range r.Topics {
				rt := kmsg.NewCreateTopicsResponseTopic()
				rt.Topic = ct.Topic
				rt.ErrorCode = code(kmsg.ACLResourceTypeTopic, kmsg.ACLOperationCreate, ct.Topic, kerr.TopicAuthorizationFailed, 0)
				resp.Topics = append(resp.Topics, rt)
			}
			return resp, nil
		case *kmsg.DescribeConfigsRequest: // DESCRIBE_CONFIGS on the cluster
			resp := r.ResponseKind().(*kmsg.DescribeConfigsResponse)
			rr := kmsg.NewDescribeConfigsResponseResource()
			rr.ErrorCode = code(kmsg.ACLResourceTypeCluster, kmsg.ACLOperationDescribeConfigs, clusterName, kerr.ClusterAuthorizationFailed, 0)
			resp.Resources = append(resp.Resources, rr)
			return resp, nil
		case *kmsg.IncrementalAlterConfigsRequest: // ALTER_CONFIGS on the cluster
			resp := r.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
			rr := kmsg.NewIncrementalAlterConfigsResponseResource()
			rr.ErrorCode = code(kmsg.ACLResourceTypeCluster, kmsg.ACLOperationAlterConfigs, clusterName, kerr.ClusterAuthorizationFailed, 0)
			resp.Resources = append(resp.Resources, rr)
			return resp, nil
		}
		t.Errorf("the route asked %s, which is no authorization probe", kmsg.NameForKey(req.Key()))
		return nil, kerr.UnknownServerError
	})
}

// joinDirect joins member to group (source topic "in") on conn and
// heartbeats until it owns its tasks; it returns the member epoch. The
// topic is in the metadata from the start, so the coordinator assigns at
// once: a few heartbeats, no wait.
func (e *env) joinDirect(conn *proxytest.Conn, group, member string) int32 {
	e.t.Helper()
	req := join(group, member)
	req.Version = 1
	for range 5 {
		resp := respond[*kmsg.StreamsGroupHeartbeatResponse](e, conn, req)
		if resp.ErrorCode != 0 {
			e.t.Fatalf("heartbeat of %s: %v %s", member, kerr.ErrorForCode(resp.ErrorCode), deref(resp.ErrorMessage))
		}
		if resp.ActiveTasks != nil && len(resp.Status) == 0 {
			return resp.MemberEpoch
		}
		req = kmsg.NewPtrStreamsGroupHeartbeatRequest()
		req.Version, req.Group, req.MemberID, req.MemberEpoch = 1, group, member, resp.MemberEpoch
		if resp.ActiveTasks != nil {
			req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = resp.ActiveTasks, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		}
	}
	e.t.Fatalf("%s not assigned after 5 heartbeats", member)
	return 0
}

// upstreamOf answers what a route sends upstream on a client's connection to
// node (-1: the bootstrap connection; kgo picks the broker), as the cluster
// answers the control-plane client (at the version kgo negotiates).
func (e *env) upstreamOf(node int32) func(kmsg.Request) kmsg.Response {
	return func(r kmsg.Request) kmsg.Response {
		e.t.Helper()
		var resp kmsg.Response
		var err error
		if node < 0 {
			resp, err = e.ctl.Request(e.ctx, r)
		} else {
			resp, err = e.ctl.Broker(int(node)).Request(e.ctx, r)
		}
		if err != nil {
			e.t.Fatalf("upstream %s: %v", kmsg.NameForKey(r.Key()), err)
		}
		return resp
	}
}

// through is what the client of conn gets for body: the route's answer, or
// the cluster's answer (upstream) to what the route sends upstream, passed
// back through the route.
func (e *env) through(conn *proxytest.Conn, body kmsg.Request) kmsg.Response {
	e.t.Helper()
	sent := kmsg.RequestForKey(body.Key()) // the client's bytes, before the handler owns body
	sent.SetVersion(body.GetVersion())
	if err := sent.ReadFrom(body.AppendTo(nil)); err != nil {
		e.t.Fatal(err)
	}
	res := e.serve(conn, body)
	up := e.upstreamOf(conn.Client.Node)
	switch res.Kind {
	case proxytest.Responded:
		return res.Response
	case proxytest.Forwarded:
		resp := up(sent)
		resp.SetVersion(sent.GetVersion())
		return resp
	case proxytest.Rewritten:
		got, err := res.Answer(up(res.Request))
		if err != nil {
			e.t.Fatal(err)
		}
		return got
	}
	e.t.Fatalf("%s: %v (%s)", kmsg.NameForKey(body.Key()), res.Kind, res.Reason)
	return nil
}

// do sends body as the client does: through the proxy to the coordinator
// of group "app" (e.broker), or, in direct mode, through its route on a
// connection of its own without ACLs (through) at the version a client
// negotiates with the proxy (the route's highest), and a key no route
// serves straight to the cluster.
func (e *env) do(body kmsg.Request) (kmsg.Response, error) {
	if !e.direct {
		return e.broker.Request(e.ctx, body)
	}
	if e.negotiate(body) {
		return e.through(e.conn(allowAll), body), nil
	}
	return e.ctl.Request(e.ctx, body)
}

// negotiate sets body's version to what a client negotiates with the proxy
// for a routed key (the route's highest, as kgo picks the highest common
// version) and says whether the key is routed.
func (e *env) negotiate(body kmsg.Request) bool {
	for _, rt := range e.routes.active() {
		if int16(rt.key) == body.Key() {
			body.SetVersion(min(rt.max, body.MaxVersion()))
			return true
		}
	}
	return false
}

// unrouted sends body, of a key no route serves, as the client does:
// through the proxy (untouched) or straight to the cluster.
func (e *env) unrouted(body kmsg.Request) (kmsg.Response, error) {
	if e.direct {
		return e.ctl.Request(e.ctx, body)
	}
	return e.cl.Request(e.ctx, body)
}
