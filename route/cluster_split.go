package route

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
	"github.com/streamshift/streamshift/proxy/peer"
)

// Requests naming several groups (docs/one-address.md §4 "Multi-group
// keys, split by owner"): DescribeGroups, DeleteGroups, OffsetFetch v8+
// and StreamsGroupDescribe of several groups, and the GROUP resources of
// DescribeConfigs and IncrementalAlterConfigs. The origin splits such a
// request by the owner of each group's log partition: the entries owned
// here (and the entries naming no group: topic and broker resources) are
// handled as a request of their own, exactly as before; each other
// instance gets one sub-request of the same key and version with its
// entries only (a serve call: the owner handles it as a request of its
// own, forwarding what it does not serve upstream on the client's
// connection here); an entry whose partition nobody owns right now is
// answered COORDINATOR_NOT_AVAILABLE. The answers merge back in request
// order (mergeByID, mergeByPosition). A group no instance serves (a plain
// consumer group) thus reaches the upstream through its partition's owner,
// which answers it as a single instance would.

// splitter is how a multi-group key splits by owner; the groups of each
// entry are the key's (Groups).
type splitter struct {
	// part is a copy of the request with the entries idx only.
	part func(r kmsg.Request, idx []int) kmsg.Request
	// merge answers the request from its parts' answers, into base (the
	// local part's response, or an empty one).
	merge func(r kmsg.Request, base kmsg.Response, parts []splitAnswer) kmsg.Response
}

// splitAnswer is a part's answer: resp, or err for each of its entries.
type splitAnswer struct {
	idx  []int
	resp kmsg.Response
	err  error
}

// splitKey types a splitter: Q the request, P the response, E an entry of
// the response.
type splitKey[Q kmsg.Request, P kmsg.Response, E any] struct {
	// groups is the group of each entry, "" for one naming none: the
	// key's Groups.
	groups  func(Q) []string
	part    func(Q, []int) Q
	entries func(P) *[]E
	// failed answers entry i with err.
	failed func(r Q, i int, err error) E
	// id is an answer's group: answers merge by it (mergeByID). Nil:
	// by position (mergeByPosition), as resources are answered.
	id func(E) string
}

// refuse answers every entry of r with err: the key's refusal.
func (k splitKey[Q, P, E]) refuse(r Q, err error) kmsg.Response {
	resp := r.ResponseKind().(P)
	n := len(k.groups(r))
	es := make([]E, n)
	for i := range n {
		es[i] = k.failed(r, i, err)
	}
	*k.entries(resp) = es
	return resp
}

func (k splitKey[Q, P, E]) splitter() *splitter {
	return &splitter{
		part: func(r kmsg.Request, idx []int) kmsg.Request { return k.part(r.(Q), idx) },
		merge: func(r kmsg.Request, base kmsg.Response, parts []splitAnswer) kmsg.Response {
			q, out := r.(Q), base.(P)
			n := len(k.groups(q))
			failed := map[int]E{}
			var byID []E
			at := make(map[int]E, n)
			var extra []E
			for _, pa := range parts {
				if pa.resp == nil {
					for _, i := range pa.idx {
						failed[i] = k.failed(q, i, pa.err)
					}
					continue
				}
				got := *k.entries(pa.resp.(P))
				if k.id != nil {
					byID = append(byID, got...)
					continue
				}
				for j, e := range got {
					if j < len(pa.idx) {
						at[pa.idx[j]] = e
					} else {
						extra = append(extra, e)
					}
				}
			}
			answered := func(i int) (E, bool) { e, ok := failed[i]; return e, ok }
			if k.id != nil {
				*k.entries(out) = mergeByID(k.groups(q), answered, byID, k.id)
				return out
			}
			answered = func(i int) (E, bool) {
				if e, ok := failed[i]; ok {
					return e, true
				}
				e, ok := at[i]
				return e, ok
			}
			*k.entries(out) = mergeByPosition(n, answered, extra)
			return out
		},
	}
}

// pick is the entries idx of es.
func pick[T any](es []T, idx []int) []T {
	out := make([]T, 0, len(idx))
	for _, i := range idx {
		out = append(out, es[i])
	}
	return out
}

// splitParts is a request's entries by owner: here (this instance's and
// the entries naming no group), by peer, and nobody's.
type splitParts struct {
	here   []int
	peers  map[string][]int
	order  []string // peers in the order of their first entry
	nobody []int
	gen    int32
}

func (rs *Routes) splitByOwner(groups []string) splitParts {
	ps := splitParts{peers: map[string][]int{}}
	for i, g := range groups {
		if g == "" {
			ps.here = append(ps.here, i)
			continue
		}
		self, owner, gen, ok := rs.o.Cluster.Owner(g)
		switch {
		case !ok:
			ps.nobody = append(ps.nobody, i)
		case self:
			ps.here = append(ps.here, i)
		default:
			if _, seen := ps.peers[owner]; !seen {
				ps.order = append(ps.order, owner)
			}
			ps.peers[owner] = append(ps.peers[owner], i)
			ps.gen = gen
		}
	}
	return ps
}

// clusterSplit wraps the route of a multi-group key (rt.split): a request
// with entries of other instances' groups is split by owner (split), every
// other request goes to h as before; one naming a single group of a gated
// key is the gate's (h). A request that hopped here is one owner's part
// already: never split again. In a mixed release (Hops false) nothing is
// split.
func (rs *Routes) clusterSplit(rt route, h handler) handler {
	if rs.o.Cluster == nil || rt.split == nil {
		return h
	}
	serve, sp, refuse := h.serve, rt.split, rt.refuse
	h.serve = func(req *proxy.Request, out proxy.Outcome) {
		if req.Client.Remote() || !rs.o.Cluster.Hops() {
			serve(req, out)
			return
		}
		if rt.group != nil {
			if _, one := rt.group(req.Body); one {
				serve(req, out)
				return
			}
		}
		groups := rt.groups(req.Body)
		ps := rs.splitByOwner(groups)
		if len(ps.here) == len(groups) {
			serve(req, out)
			return
		}
		go rs.split(req, out, serve, sp, refuse, groups, ps)
	}
	return h
}

// split sends each peer its part in parallel, answers the entries nobody
// owns, then handles the part owned here (if any) and answers the client
// with the merged answers.
func (rs *Routes) split(req *proxy.Request, out proxy.Outcome, serve proxy.InterceptorFunc, sp *splitter, refuse func(kmsg.Request, error) kmsg.Response, groups []string, ps splitParts) {
	c := rs.o.Cluster
	parts := make([]splitAnswer, len(ps.order), len(ps.order)+1)
	deadline := time.Now().Add(c.ForwardTimeout())
	var wg sync.WaitGroup
	for n, owner := range ps.order {
		idx := ps.peers[owner]
		parts[n].idx = idx
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithDeadline(context.Background(), deadline)
			defer cancel()
			first := groups[idx[0]]
			frame, err := c.Forward(ctx, owner, first, ps.gen, req.WithBody(sp.part(req.Body, idx)), time.Until(deadline))
			if err == nil {
				var resp kmsg.Response
				if resp, err = proxy.DecodeResponse(req.Key, req.Version, frame); err == nil {
					parts[n].resp = resp
					return
				}
				err = &peer.Error{Peer: owner, Code: kerr.CoordinatorNotAvailable.Code, Reason: err.Error()}
			}
			parts[n].err = peerFailure(fmt.Sprintf("groups %v", pick(groups, idx)), owner, err)
		}()
	}
	wg.Wait()
	for _, i := range ps.nobody {
		parts = append(parts, splitAnswer{idx: []int{i}, err: noOwner(groups[i])})
	}
	if len(ps.here) == 0 {
		base := req.Body.ResponseKind()
		base.SetVersion(req.Version)
		out.Respond(sp.merge(req.Body, base, parts))
		return
	}
	local := req.WithBody(sp.part(req.Body, ps.here))
	merge := func(resp kmsg.Response) kmsg.Response {
		if resp == nil || resp.Key() != req.Key {
			return resp
		}
		return sp.merge(req.Body, resp, append(parts, splitAnswer{idx: ps.here, resp: resp}))
	}
	serve(local, &splitOutcome{out: out, local: local, merge: merge, refuse: refuse})
}

// splitOutcome completes the part of a split request owned here: its
// answer, whether made here or upstream, merges with the other parts'
// before it reaches the client.
type splitOutcome struct {
	out    proxy.Outcome
	local  *proxy.Request
	merge  func(kmsg.Response) kmsg.Response
	refuse func(kmsg.Request, error) kmsg.Response
}

func (o *splitOutcome) Respond(resp kmsg.Response) { o.out.Respond(o.merge(resp)) }

// Forward sends the part (not the client's whole request) upstream.
func (o *splitOutcome) Forward() {
	o.out.ForwardRewritten(o.local.Body, o.local.Version, o.merge)
}

func (o *splitOutcome) ForwardRewritten(req kmsg.Request, version int16, onResponse func(kmsg.Response) kmsg.Response) {
	o.out.ForwardRewritten(req, version, func(resp kmsg.Response) kmsg.Response {
		if onResponse != nil {
			resp = onResponse(resp)
		}
		return o.merge(resp)
	})
}

// RespondFrame takes an owner's answer to the part (the map moved a group
// between the split and the part's gate).
func (o *splitOutcome) RespondFrame(data []byte) {
	resp, err := proxy.DecodeResponse(o.local.Key, o.local.Version, data)
	if err != nil {
		o.out.Respond(o.merge(o.refuse(o.local.Body, &clusterError{kerr.CoordinatorNotAvailable, fmt.Sprintf("an owner's answer: %v", err)})))
		return
	}
	o.Respond(resp)
}

// peerFailure is what the client gets for what it asked of peer (what)
// when the serve call failed: what the owner could not decode or failed
// on as it is, NOT_COORDINATOR (the owner did nothing: its partition
// moves) as it is, anything else (a timeout, a lost link, a busy owner, a
// link not admitted) COORDINATOR_NOT_AVAILABLE, which is retriable.
func peerFailure(what, owner string, err error) error {
	code := peer.ErrorCode(err)
	switch code {
	case kerr.UnsupportedVersion.Code, kerr.InvalidRequest.Code, kerr.UnknownServerError.Code:
	case kerr.NotCoordinator.Code:
		return &clusterError{kerr.NotCoordinator, fmt.Sprintf("%s: streamshift instance %s does not serve it (its log partition moves)", what, owner)}
	default:
		code = kerr.CoordinatorNotAvailable.Code
	}
	return &clusterError{kerr.TypedErrorForCode(code), fmt.Sprintf("%s: its owner, streamshift instance %s: %v", what, owner, err)}
}

// The splitters of the multi-group keys.
var (
	describeGroupsSplit = splitKey[*kmsg.DescribeGroupsRequest, *kmsg.DescribeGroupsResponse, kmsg.DescribeGroupsResponseGroup]{
		groups: func(r *kmsg.DescribeGroupsRequest) []string { return r.Groups },
		part: func(r *kmsg.DescribeGroupsRequest, idx []int) *kmsg.DescribeGroupsRequest {
			p := *r
			p.Groups = pick(r.Groups, idx)
			return &p
		},
		entries: func(p *kmsg.DescribeGroupsResponse) *[]kmsg.DescribeGroupsResponseGroup { return &p.Groups },
		failed: func(r *kmsg.DescribeGroupsRequest, i int, err error) kmsg.DescribeGroupsResponseGroup {
			g := kmsg.NewDescribeGroupsResponseGroup()
			msg := err.Error()
			g.Group, g.ErrorCode, g.ErrorMessage = r.Groups[i], kafkaCode(err), &msg
			return g
		},
		id: func(g kmsg.DescribeGroupsResponseGroup) string { return g.Group },
	}

	deleteGroupsSplit = splitKey[*kmsg.DeleteGroupsRequest, *kmsg.DeleteGroupsResponse, kmsg.DeleteGroupsResponseGroup]{
		groups: func(r *kmsg.DeleteGroupsRequest) []string { return r.Groups },
		part: func(r *kmsg.DeleteGroupsRequest, idx []int) *kmsg.DeleteGroupsRequest {
			p := *r
			p.Groups = pick(r.Groups, idx)
			return &p
		},
		entries: func(p *kmsg.DeleteGroupsResponse) *[]kmsg.DeleteGroupsResponseGroup { return &p.Groups },
		failed: func(r *kmsg.DeleteGroupsRequest, i int, err error) kmsg.DeleteGroupsResponseGroup {
			g := kmsg.NewDeleteGroupsResponseGroup()
			g.Group, g.ErrorCode = r.Groups[i], kafkaCode(err)
			return g
		},
		id: func(g kmsg.DeleteGroupsResponseGroup) string { return g.Group },
	}

	// OffsetFetch splits from v8 (a batch of groups); one group is
	// clusterGate's (keys.go).
	offsetFetchSplit = splitKey[*kmsg.OffsetFetchRequest, *kmsg.OffsetFetchResponse, kmsg.OffsetFetchResponseGroup]{
		groups: func(r *kmsg.OffsetFetchRequest) []string {
			if r.Version < 8 {
				return []string{r.Group}
			}
			gs := make([]string, len(r.Groups))
			for i, g := range r.Groups {
				gs[i] = g.Group
			}
			return gs
		},
		part: func(r *kmsg.OffsetFetchRequest, idx []int) *kmsg.OffsetFetchRequest {
			p := *r
			p.Groups = pick(r.Groups, idx)
			return &p
		},
		entries: func(p *kmsg.OffsetFetchResponse) *[]kmsg.OffsetFetchResponseGroup { return &p.Groups },
		failed: func(r *kmsg.OffsetFetchRequest, i int, err error) kmsg.OffsetFetchResponseGroup {
			g := kmsg.NewOffsetFetchResponseGroup()
			g.Group, g.ErrorCode = r.Groups[i].Group, kafkaCode(err)
			return g
		},
		id: func(g kmsg.OffsetFetchResponseGroup) string { return g.Group },
	}

	streamsGroupDescribeSplit = splitKey[*kmsg.StreamsGroupDescribeRequest, *kmsg.StreamsGroupDescribeResponse, kmsg.StreamsGroupDescribeResponseGroup]{
		groups: func(r *kmsg.StreamsGroupDescribeRequest) []string { return r.Groups },
		part: func(r *kmsg.StreamsGroupDescribeRequest, idx []int) *kmsg.StreamsGroupDescribeRequest {
			p := *r
			p.Groups = pick(r.Groups, idx)
			return &p
		},
		entries: func(p *kmsg.StreamsGroupDescribeResponse) *[]kmsg.StreamsGroupDescribeResponseGroup { return &p.Groups },
		failed: func(r *kmsg.StreamsGroupDescribeRequest, i int, err error) kmsg.StreamsGroupDescribeResponseGroup {
			g := kmsg.NewStreamsGroupDescribeResponseGroup()
			msg := err.Error()
			g.Group, g.ErrorCode, g.ErrorMessage = r.Groups[i], kafkaCode(err), &msg
			return g
		},
		id: func(g kmsg.StreamsGroupDescribeResponseGroup) string { return g.Group },
	}

	// ConsumerGroupDescribe: a streams group's entry is answered by its
	// owner ("is not a consumer group"), the others go upstream.
	consumerGroupDescribeSplit = splitKey[*kmsg.ConsumerGroupDescribeRequest, *kmsg.ConsumerGroupDescribeResponse, kmsg.ConsumerGroupDescribeResponseGroup]{
		groups: func(r *kmsg.ConsumerGroupDescribeRequest) []string { return r.Groups },
		part: func(r *kmsg.ConsumerGroupDescribeRequest, idx []int) *kmsg.ConsumerGroupDescribeRequest {
			p := *r
			p.Groups = pick(r.Groups, idx)
			return &p
		},
		entries: func(p *kmsg.ConsumerGroupDescribeResponse) *[]kmsg.ConsumerGroupDescribeResponseGroup {
			return &p.Groups
		},
		failed: func(r *kmsg.ConsumerGroupDescribeRequest, i int, err error) kmsg.ConsumerGroupDescribeResponseGroup {
			return consumerGroupNotDescribed(r.Groups[i], kerr.TypedErrorForCode(kafkaCode(err)), err.Error())
		},
		id: func(g kmsg.ConsumerGroupDescribeResponseGroup) string { return g.Group },
	}

	// Group configs: GROUP resources go to their group's owner, the
	// others (topics, brokers) are handled here.
	describeConfigsSplit = splitKey[*kmsg.DescribeConfigsRequest, *kmsg.DescribeConfigsResponse, kmsg.DescribeConfigsResponseResource]{
		groups: func(r *kmsg.DescribeConfigsRequest) []string {
			gs := make([]string, len(r.Resources))
			for i, res := range r.Resources {
				if res.ResourceType == kmsg.ConfigResourceTypeGroupConfig {
					gs[i] = res.ResourceName
				}
			}
			return gs
		},
		part: func(r *kmsg.DescribeConfigsRequest, idx []int) *kmsg.DescribeConfigsRequest {
			p := *r
			p.Resources = pick(r.Resources, idx)
			return &p
		},
		entries: func(p *kmsg.DescribeConfigsResponse) *[]kmsg.DescribeConfigsResponseResource { return &p.Resources },
		failed: func(r *kmsg.DescribeConfigsRequest, i int, err error) kmsg.DescribeConfigsResponseResource {
			res := kmsg.NewDescribeConfigsResponseResource()
			msg := err.Error()
			res.ResourceType, res.ResourceName = r.Resources[i].ResourceType, r.Resources[i].ResourceName
			res.ErrorCode, res.ErrorMessage = kafkaCode(err), &msg
			return res
		},
	}

	incrementalAlterConfigsSplit = splitKey[*kmsg.IncrementalAlterConfigsRequest, *kmsg.IncrementalAlterConfigsResponse, kmsg.IncrementalAlterConfigsResponseResource]{
		groups: func(r *kmsg.IncrementalAlterConfigsRequest) []string {
			gs := make([]string, len(r.Resources))
			for i, res := range r.Resources {
				if res.ResourceType == kmsg.ConfigResourceTypeGroupConfig {
					gs[i] = res.ResourceName
				}
			}
			return gs
		},
		part: func(r *kmsg.IncrementalAlterConfigsRequest, idx []int) *kmsg.IncrementalAlterConfigsRequest {
			p := *r
			p.Resources = pick(r.Resources, idx)
			return &p
		},
		entries: func(p *kmsg.IncrementalAlterConfigsResponse) *[]kmsg.IncrementalAlterConfigsResponseResource {
			return &p.Resources
		},
		failed: func(r *kmsg.IncrementalAlterConfigsRequest, i int, err error) kmsg.IncrementalAlterConfigsResponseResource {
			res := kmsg.NewIncrementalAlterConfigsResponseResource()
			msg := err.Error()
			res.ResourceType, res.ResourceName = r.Resources[i].ResourceType, r.Resources[i].ResourceName
			res.ErrorCode, res.ErrorMessage = kafkaCode(err), &msg
			return res
		},
	}
)
