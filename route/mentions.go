package route

import (
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

// A request may name one group (or config resource) many times, and Kafka
// answers every mention: StreamsGroupDescribe of one group ×1,000 is 1,000
// descriptions. Building them one by one (a queued read, a Change, sorted
// members per mention) cost about ten times the answer in memory. So a
// request with repeated mentions is handled as the request of its
// distinct entries, each described once, and the answer repeats each
// entry's encoding per mention (repeatedAnswer) in the order Kafka would
// have given: the bytes are those of the answer built mention by mention,
// and the proxy refuses it before building it when it is over its bound
// (proxy/outcome.go). A request without repeats is handled as it is.

// mentionKey is how a key's request names its entries and how its answer
// orders them.
type mentionKey[Q kmsg.Request, P kmsg.Response, E any] struct {
	// mentions is the identity of each entry of the request: entries of
	// the same identity get the same answer.
	mentions func(Q) []string
	// part is the request with the entries idx only.
	part    func(Q, []int) Q
	entries func(P) *[]E
	// answerID is the identity of an answer's entry; nil: the answer has
	// one entry per entry of the request, in request order.
	answerID func(E) string
	// phase is the order Kafka answers entries in when the request is
	// handled whole here: entries of a lower phase first, then request
	// order (StreamsGroupDescribe: refused groups, then invalid ids, then
	// the others). Nil, or a request split between instances (merged
	// in request order): request order.
	phase func(E) int
	// whole says the request goes upstream as it is, answered by Kafka in
	// its own order (which may not be request order): it is not
	// deduplicated. Nil: never.
	whole func(rs *Routes, req *proxy.Request, distinct Q) bool
}

// mentioned is a table row's around (row.go): repeatedMentions of k.
func mentioned[Q kmsg.Request, P kmsg.Response, E any](rs *Routes, k mentionKey[Q, P, E]) func(handler) handler {
	return func(h handler) handler { return repeatedMentions(rs, k, h) }
}

// repeatedMentions wraps h: a request with repeated mentions is served as the
// request of its distinct entries, and the answer repeats them.
func repeatedMentions[Q kmsg.Request, P kmsg.Response, E any](rs *Routes, k mentionKey[Q, P, E], h handler) handler {
	serve := h.serve
	h.serve = func(req *proxy.Request, out proxy.Outcome) {
		q, ok := req.Body.(Q)
		if !ok {
			serve(req, out)
			return
		}
		ids := k.mentions(q)
		first := make(map[string]int32, len(ids))
		var distinct []int
		mention := make([]int32, len(ids)) // mention i → its distinct entry
		for i, id := range ids {
			d, seen := first[id]
			if !seen {
				d = int32(len(distinct))
				first[id] = d
				distinct = append(distinct, i)
			}
			mention[i] = d
		}
		if len(distinct) == len(ids) {
			serve(req, out)
			return
		}
		dq := k.part(q, distinct)
		if k.whole != nil && k.whole(rs, req, dq) {
			serve(req, out)
			return
		}
		dreq := req.WithBody(dq)
		phase := k.phase
		if phase != nil && rs.splitsGroups(req, pick(ids, distinct)) {
			phase = nil
		}
		expand := func(resp kmsg.Response) kmsg.Response {
			p, ok := resp.(P)
			if !ok {
				return resp
			}
			order, err := mentionOrder(*k.entries(p), mention, distinct, ids, k.answerID, phase)
			if err != nil {
				rs.o.Log.Error().Err(err).Str("api", kmsg.NameForKey(req.Key)).Msg("repeated mentions: answer does not match the distinct request; answered unrepeated")
				return resp
			}
			return newRepeatedAnswer(p, k.entries, order)
		}
		serve(dreq, &mentionOutcome{out: out, distinct: dreq, expand: expand})
	}
	return h
}

// mentionOrder is the distinct answer's entry that answers each position
// of the full answer.
func mentionOrder[E any](answer []E, mention []int32, distinct []int, ids []string, answerID func(E) string, phase func(E) int) ([]int32, error) {
	// entryOf[d] is the answer's entry of distinct entry d.
	entryOf := make([]int32, len(distinct))
	if answerID == nil {
		if len(answer) != len(distinct) {
			return nil, fmt.Errorf("%d answers to %d distinct entries", len(answer), len(distinct))
		}
		for d := range entryOf {
			entryOf[d] = int32(d)
		}
	} else {
		at := make(map[string]int32, len(answer))
		for j, e := range answer {
			id := answerID(e)
			if _, dup := at[id]; dup {
				return nil, fmt.Errorf("two answers for %q", id)
			}
			at[id] = int32(j)
		}
		for d, i := range distinct {
			j, ok := at[ids[i]]
			if !ok {
				return nil, fmt.Errorf("no answer for %q", ids[i])
			}
			entryOf[d] = j
		}
	}
	order := make([]int32, len(mention))
	for i, d := range mention {
		order[i] = entryOf[d]
	}
	if phase != nil {
		phases := make([]int, len(answer))
		for j, e := range answer {
			phases[j] = phase(e)
		}
		slices.SortStableFunc(order, func(a, b int32) int { return phases[a] - phases[b] })
	}
	return order, nil
}

// mentionOutcome completes the distinct request: whatever answers it, the
// client gets the answer repeated per mention.
type mentionOutcome struct {
	out      proxy.Outcome
	distinct *proxy.Request
	expand   func(kmsg.Response) kmsg.Response
}

func (o *mentionOutcome) Respond(resp kmsg.Response) { o.out.Respond(o.expand(resp)) }

// Forward sends the distinct request (not the client's) upstream.
func (o *mentionOutcome) Forward() {
	o.out.ForwardRewritten(o.distinct.Body, o.distinct.Version, o.expand)
}

func (o *mentionOutcome) ForwardRewritten(req kmsg.Request, version int16, onResponse func(kmsg.Response) kmsg.Response) {
	o.out.ForwardRewritten(req, version, func(resp kmsg.Response) kmsg.Response {
		if onResponse != nil {
			resp = onResponse(resp)
		}
		return o.expand(resp)
	})
}

// RespondFrame takes an owner's answer to the distinct request.
func (o *mentionOutcome) RespondFrame(data []byte) {
	resp, err := proxy.DecodeResponse(o.distinct.Key, o.distinct.Version, data)
	if err != nil {
		o.out.Respond(notServed(o.distinct.Body, &clusterError{kerr.CoordinatorNotAvailable, fmt.Sprintf("an owner's answer: %v", err)}))
		return
	}
	o.Respond(resp)
}

// The keys that answer a list of groups or resources locally.
var (
	streamsGroupDescribeMentions = mentionKey[*kmsg.StreamsGroupDescribeRequest, *kmsg.StreamsGroupDescribeResponse, kmsg.StreamsGroupDescribeResponseGroup]{
		mentions: func(r *kmsg.StreamsGroupDescribeRequest) []string { return r.Groups },
		part: func(r *kmsg.StreamsGroupDescribeRequest, idx []int) *kmsg.StreamsGroupDescribeRequest {
			p := *r
			p.Groups = pick(r.Groups, idx)
			return &p
		},
		entries:  func(p *kmsg.StreamsGroupDescribeResponse) *[]kmsg.StreamsGroupDescribeResponseGroup { return &p.Groups },
		answerID: func(g kmsg.StreamsGroupDescribeResponseGroup) string { return g.Group },
		// streamsGroupDescribe: the groups the client may not DESCRIBE,
		// then (the coordinator) invalid ids, then the groups looked up.
		phase: func(g kmsg.StreamsGroupDescribeResponseGroup) int {
			switch {
			case g.ErrorCode == kerr.GroupAuthorizationFailed.Code:
				return 0
			case g.Group == "":
				return 1
			}
			return 2
		},
	}

	// DescribeGroups: owned groups are answered here, merged in request
	// order with the upstream's answer; a request of no owned group goes
	// upstream whole.
	describeGroupsMentions = mentionKey[*kmsg.DescribeGroupsRequest, *kmsg.DescribeGroupsResponse, kmsg.DescribeGroupsResponseGroup]{
		mentions: func(r *kmsg.DescribeGroupsRequest) []string { return r.Groups },
		part: func(r *kmsg.DescribeGroupsRequest, idx []int) *kmsg.DescribeGroupsRequest {
			p := *r
			p.Groups = pick(r.Groups, idx)
			return &p
		},
		entries:  func(p *kmsg.DescribeGroupsResponse) *[]kmsg.DescribeGroupsResponseGroup { return &p.Groups },
		answerID: func(g kmsg.DescribeGroupsResponseGroup) string { return g.Group },
		whole: func(rs *Routes, req *proxy.Request, r *kmsg.DescribeGroupsRequest) bool {
			if rs.splitsGroups(req, r.Groups) {
				return false
			}
			return !slices.ContainsFunc(r.Groups, rs.o.Coordinator.Owns)
		},
	}

	// DescribeConfigs: GROUP resources served here are answered in place,
	// the others by the upstream in the remaining positions; a request of
	// none served here goes upstream whole. A resource is the same
	// mention when its type, name and config names are.
	describeConfigsMentions = mentionKey[*kmsg.DescribeConfigsRequest, *kmsg.DescribeConfigsResponse, kmsg.DescribeConfigsResponseResource]{
		mentions: func(r *kmsg.DescribeConfigsRequest) []string {
			ids := make([]string, len(r.Resources))
			for i, res := range r.Resources {
				var b strings.Builder
				fmt.Fprintf(&b, "%d\x00%d:%s", res.ResourceType, len(res.ResourceName), res.ResourceName)
				if res.ConfigNames == nil {
					b.WriteString("\x00all")
				}
				for _, n := range res.ConfigNames {
					fmt.Fprintf(&b, "\x00%d:%s", len(n), n)
				}
				ids[i] = b.String()
			}
			return ids
		},
		part: func(r *kmsg.DescribeConfigsRequest, idx []int) *kmsg.DescribeConfigsRequest {
			p := *r
			p.Resources = pick(r.Resources, idx)
			return &p
		},
		entries: func(p *kmsg.DescribeConfigsResponse) *[]kmsg.DescribeConfigsResponseResource { return &p.Resources },
		whole: func(rs *Routes, req *proxy.Request, r *kmsg.DescribeConfigsRequest) bool {
			groups := make([]string, len(r.Resources))
			for i, res := range r.Resources {
				if res.ResourceType == kmsg.ConfigResourceTypeGroupConfig {
					groups[i] = res.ResourceName
				}
			}
			if rs.splitsGroups(req, groups) {
				return false
			}
			return !slices.ContainsFunc(r.Resources, rs.describesGroupResource)
		},
	}
)

// splitsGroups says a request naming groups would be split between
// instances (clusterSplit), whose merge answers in request order.
func (rs *Routes) splitsGroups(req *proxy.Request, groups []string) bool {
	c := rs.o.Cluster
	if c == nil || req.Client.Remote() || !c.Hops() {
		return false
	}
	ps := rs.splitByOwner(groups)
	return len(ps.here) != len(groups)
}
