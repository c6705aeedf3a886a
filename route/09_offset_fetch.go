package route

import (
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

// OffsetFetch (key 9): v0-v9 served, advertised up to v9 and capped there
// whatever the upstream speaks (versions.go).
//
// By version:
//   - v0-v7: one group, no member fields: forwarded (re-encoded at the
//     upstream's newest version when older).
//   - v8: a batch of groups (KIP-709); to an upstream below v8 a batch of
//     one group is down-converted and its answer converted back, a batch of
//     several is answered UNSUPPORTED_VERSION.
//   - v9: member id and epoch per group (KIP-848): checked against an owned
//     streams group (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID), then forwarded
//     without them.

// offsetFetch serves OffsetFetch v0-v9, advertised up to v9 and capped
// there (offsetsMaxVersion); an older upstream gets it down-converted. With
// the migration on, a fetch of one group passes the gate (a takeover holds
// a group's fetches with its other requests) and what goes upstream is
// counted in flight.
//
// With several instances, a v8+ fetch of several groups was split by owner
// first (clusterSplit), and a fetch of one group another instance owns went
// there (clusterGate).
func (rs *Routes) offsetFetch(req *proxy.Request, r *kmsg.OffsetFetchRequest, out proxy.Outcome) {
	rs.gated(req, out, fetchedGroup(r), nil, func(out proxy.Outcome) { rs.offsetFetchGated(req, r, out) })
}

// offsetFetchGated: a v9+ fetch naming a member of an owned group is checked
// as Kafka's streams group does (the member exists at exactly that epoch),
// then forwarded without the member fields, which the upstream's classic
// group would not know. Groups that fail the check are answered here and
// merged into the upstream's response; other groups pass untouched.
func (rs *Routes) offsetFetchGated(req *proxy.Request, r *kmsg.OffsetFetchRequest, out proxy.Outcome) {
	up := rs.upstreamMax(req.Key)
	if req.Version < 9 {
		forwardAt(req, out, up)
		return
	}
	type check struct {
		i   int
		err error
	}
	var (
		mu     sync.Mutex
		wg     sync.WaitGroup
		checks []check
	)
	// A request may name one group and member many times (issue #42):
	// each is checked once, on one crossing of its queue, and the answer
	// applies to every mention, as does the client's authorization.
	type member struct {
		group, id string
		epoch     int32
	}
	mentions := map[member][]int{}
	var distinct []member
	for i, g := range r.Groups {
		if g.MemberID == nil && g.MemberEpoch < 0 {
			continue
		}
		m := member{g.Group, deref(g.MemberID), g.MemberEpoch}
		if _, seen := mentions[m]; !seen {
			// Whether the group is served here is settled by the
			// check itself (GROUP_ID_NOT_FOUND), in one crossing of
			// its queue; a group without a queue here is not asked.
			if !rs.o.Ownership.MayOwn(g.Group) {
				continue
			}
			distinct = append(distinct, m)
		}
		mentions[m] = append(mentions[m], i)
	}
	for _, m := range distinct {
		wg.Add(1)
		rs.o.Coordinator.ValidateOffsetFetch(m.group, m.id, m.epoch, func(err error) {
			mu.Lock()
			for _, i := range mentions[m] {
				checks = append(checks, check{i, err})
			}
			mu.Unlock()
			wg.Done()
		})
	}
	wg.Wait()
	owned := map[int]bool{}
	failed := map[int]error{}
	touched := false
	deniedGroup := map[string]bool{}
	for _, c := range checks {
		group := r.Groups[c.i].Group
		notHeld := errors.Is(c.err, kerr.GroupIDNotFound)
		if notHeld && !rs.o.Ownership.Claimed(group) {
			continue // not served here
		}
		owned[c.i] = true
		// A group the client may not DESCRIBE is not checked here: the
		// broker refuses it when forwarded (authorize.go).
		denied, asked := deniedGroup[group]
		if !asked {
			denied, _ = rs.groupDescribeDenied(req, group)
			deniedGroup[group] = denied
		}
		if denied {
			continue
		}
		touched = true
		if c.err != nil && !notHeld {
			failed[c.i] = c.err
		}
	}
	if !touched {
		forwardAt(req, out, up)
		return
	}
	fwd := *r
	fwd.Groups = nil
	var refused []kmsg.OffsetFetchResponseGroup
	for i, g := range r.Groups {
		if err, bad := failed[i]; bad {
			code := kafkaCode(err)
			refused = append(refused, kmsg.OffsetFetchResponseGroup{Group: g.Group, ErrorCode: code})
			continue
		}
		if owned[i] {
			g.MemberID = nil
			g.MemberEpoch = -1
		}
		fwd.Groups = append(fwd.Groups, g)
	}
	v := min(req.Version, up)
	var send kmsg.Request
	if len(fwd.Groups) > 0 {
		down, err := offsetFetchDown(&fwd, v)
		if err != nil {
			out.Respond(offsetFetchAll(r, err))
			return
		}
		send = down
	}
	// Every group is either refused here or forwarded (an owned one without
	// its member fields), so the request is never forwarded untouched.
	splitForward(req, out, 1, len(fwd.Groups), func() kmsg.Request { return send }, v, func(fr *kmsg.OffsetFetchResponse) *kmsg.OffsetFetchResponse {
		fr = offsetFetchUp(fr, &fwd, v)
		fr.Groups = append(fr.Groups, refused...)
		return fr
	})
}

// offsetFetchDown converts a v8+ request to version v; below v8 (one group
// per request) only a single group can be converted.
func offsetFetchDown(r *kmsg.OffsetFetchRequest, v int16) (*kmsg.OffsetFetchRequest, error) {
	if v >= 8 || r.Version < 8 {
		return r, nil
	}
	if len(r.Groups) != 1 {
		return nil, fmt.Errorf("the upstream supports OffsetFetch v%d only, which cannot fetch %d groups at once: %w", v, len(r.Groups), kerr.UnsupportedVersion)
	}
	g := r.Groups[0]
	down := kmsg.NewPtrOffsetFetchRequest()
	down.Group = g.Group
	down.RequireStable = r.RequireStable
	if g.Topics != nil {
		down.Topics = []kmsg.OffsetFetchRequestTopic{}
		for _, t := range g.Topics {
			down.Topics = append(down.Topics, kmsg.OffsetFetchRequestTopic{Topic: t.Topic, Partitions: t.Partitions})
		}
	}
	return down, nil
}

// offsetFetchUp converts the response of a request sent at v to the v8+
// layout of the client's request.
func offsetFetchUp(resp *kmsg.OffsetFetchResponse, orig *kmsg.OffsetFetchRequest, v int16) *kmsg.OffsetFetchResponse {
	if v >= 8 || orig.Version < 8 || len(orig.Groups) != 1 {
		return resp
	}
	g := kmsg.OffsetFetchResponseGroup{Group: orig.Groups[0].Group, ErrorCode: resp.ErrorCode}
	for _, t := range resp.Topics {
		gt := kmsg.OffsetFetchResponseGroupTopic{Topic: t.Topic}
		for _, p := range t.Partitions {
			gt.Partitions = append(gt.Partitions, kmsg.OffsetFetchResponseGroupTopicPartition{
				Partition: p.Partition, Offset: p.Offset, LeaderEpoch: p.LeaderEpoch, Metadata: p.Metadata, ErrorCode: p.ErrorCode,
			})
		}
		g.Topics = append(g.Topics, gt)
	}
	up := kmsg.NewPtrOffsetFetchResponse()
	up.ThrottleMillis = resp.ThrottleMillis
	up.Groups = []kmsg.OffsetFetchResponseGroup{g}
	return up
}

// offsetFetchAll answers every group of a v8+ request with err.
func offsetFetchAll(r *kmsg.OffsetFetchRequest, err error) *kmsg.OffsetFetchResponse {
	code := kafkaCode(err)
	resp := kmsg.NewPtrOffsetFetchResponse()
	resp.ErrorCode = code
	for _, g := range r.Groups {
		resp.Groups = append(resp.Groups, kmsg.OffsetFetchResponseGroup{Group: g.Group, ErrorCode: code})
	}
	return resp
}

// fetchedGroup is the group whose gate a fetch passes: the one group it
// names (v8+ batches groups; a batch of several is not gated).
func fetchedGroup(r *kmsg.OffsetFetchRequest) string {
	if len(r.Groups) == 1 {
		return r.Groups[0].Group
	}
	return r.Group
}
