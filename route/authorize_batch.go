package route

import (
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy"
)

// A steady fleet needs the broker's READ on each of its groups again every
// TTL, and every request Kafka checks READ on a group for names one group
// (Heartbeat, JoinGroup, ..., StreamsGroupHeartbeat; OffsetFetch, which
// names many, checks DESCRIBE, in 3.9 as in 4.4). One request answers READ
// for many groups: DescribeGroups v3 to v5 with IncludeAuthorizedOperations.
// Kafka (KafkaApis.handleDescribeGroupsRequest, 2.3 to 4.4) checks DESCRIBE
// on each group, then adds to each group its coordinator described without
// error the operations the principal may do on it
// (AuthHelper.authorizedOperations: the authorizer asked READ, DESCRIBE and
// DELETE on the group, as the READ check of a Heartbeat asks it). Up to v5
// a group the coordinator does not know, or not as a classic group, is
// described "Dead" without error (v6 answers GROUP_ID_NOT_FOUND, without the
// operations), so v5 at most.
//
// So the background refresh of a READ answer (authorize.go) takes along
// every other READ answer of the same principal (or connection) got on the
// same upstream node, used within the TTL and past a quarter of its life:
// the groups of a principal coordinated by one broker are asked again
// together, about once per half TTL, in one request. A group that answer
// leaves open (GROUP_AUTHORIZATION_FAILED: DESCRIBE denied, which READ
// implies unless DESCRIBE is denied explicitly; NOT_COORDINATOR or another
// error: no operations) is asked with its own Heartbeat probe if the
// request that started the refresh needs it, and with that one alone from
// then on (single); a group only taken along is left to expire as it
// would have. An upstream without DescribeGroups v3 gets the Heartbeat
// probes.

// maxBatchedGroups bounds the groups of one batched refresh.
const maxBatchedGroups = 256

// authOwner is whose an answer is: a principal, or a connection (authKey).
type authOwner struct {
	conn      uint64
	principal string
}

func ownerOf(k authKey) authOwner { return authOwner{conn: k.conn, principal: k.principal} }

// index notes a new entry k in reads; mu is held.
func (a *authorizer) index(k authKey) {
	if k.resource != kmsg.ACLResourceTypeGroup || k.op != kmsg.ACLOperationRead {
		return
	}
	o := ownerOf(k)
	if a.reads[o] == nil {
		a.reads[o] = map[string]struct{}{}
	}
	a.reads[o][k.name] = struct{}{}
}

// drop removes entry k; mu is held.
func (a *authorizer) drop(k authKey) {
	delete(a.entries, k)
	if k.resource != kmsg.ACLResourceTypeGroup || k.op != kmsg.ACLOperationRead {
		return
	}
	o := ownerOf(k)
	delete(a.reads[o], k.name)
	if len(a.reads[o]) == 0 {
		delete(a.reads, o)
	}
}

// refreshBatched is refresh for group READ answers where the upstream takes
// DescribeGroups v3: it reports false, having done nothing, otherwise (or
// when a name is asked on its own).
func (a *authorizer) refreshBatched(req *proxy.Request, rt kmsg.ACLResourceType, op kmsg.ACLOperation, names []string) bool {
	if rt != kmsg.ACLResourceTypeGroup || op != kmsg.ACLOperationRead {
		return false
	}
	v := min(a.versions(int16(kmsg.DescribeGroups)), 5)
	if v < 3 {
		return false
	}
	a.mu.Lock()
	now := a.now()
	for _, n := range names {
		if a.entries[a.keyOf(req, rt, op, n)].single {
			a.mu.Unlock()
			return false
		}
	}
	batch := append([]string(nil), names...)
	if node := req.Client.Node; node >= 0 { // not the bootstrap listener, whose broker is any
		self := a.keyOf(req, rt, op, "")
		for name := range a.reads[ownerOf(self)] {
			if len(batch) >= maxBatchedGroups {
				break
			}
			k := self
			k.name = name
			e, ok := a.entries[k]
			age := now.Sub(e.at)
			if !ok || e.refreshing || e.single || e.node != node || age < a.ttl/4 || age >= a.ttl || now.Sub(e.used) >= a.ttl {
				continue
			}
			e.refreshing = true
			a.entries[k] = e
			batch = append(batch, name)
		}
	}
	a.refreshed++
	a.mu.Unlock()

	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Groups = batch
	dg.IncludeAuthorizedOperations = true
	var open map[string]bool
	p := &probing{req: req, asks: []probeAsk{{dg, v}}}
	p.read = func(resps []kmsg.Response) map[string]bool {
		var denied map[string]bool
		denied, open = readsOf(batch, resps[0].(*kmsg.DescribeGroupsResponse))
		return denied
	}
	p.start()
	go func() {
		// Past the request: for a hopped one the owner has answered it
		// already (connContext).
		ctx, cancel := connContext(req, 10*time.Second)
		defer cancel()
		denied, err := p.wait(ctx)
		a.mu.Lock()
		a.count(1, denied, err)
		if err != nil {
			// The old answers expire as they would have.
			a.unmarkRefreshingLocked(req, rt, op, batch)
			a.mu.Unlock()
			return
		}
		var answered, left, mine []string
		for i, n := range batch {
			switch {
			case !open[n]:
				answered = append(answered, n)
			case i < len(names): // batch starts with names
				mine = append(mine, n)
			default:
				left = append(left, n)
			}
		}
		a.store(req, rt, op, answered, denied, a.now())
		a.unmarkRefreshingLocked(req, rt, op, left)
		a.mu.Unlock()
		if len(mine) == 0 {
			return
		}
		// The request's own groups, unanswered: their own probes, from
		// now on alone.
		p := a.probe(req, rt, op, mine)
		denied, err = p.wait(ctx)
		a.mu.Lock()
		defer a.mu.Unlock()
		a.count(len(p.asks), denied, err)
		if err != nil {
			a.unmarkRefreshingLocked(req, rt, op, mine)
			return
		}
		a.store(req, rt, op, mine, denied, a.now())
		for _, n := range mine {
			k := a.keyOf(req, rt, op, n)
			if e, ok := a.entries[k]; ok {
				e.single = true
				a.entries[k] = e
			}
		}
	}()
	return true
}

// readsOf reads a DescribeGroups answer with the authorized operations:
// the groups asked whose READ it decides, denied or not, and those it
// leaves open.
func readsOf(asked []string, resp *kmsg.DescribeGroupsResponse) (denied, open map[string]bool) {
	denied, open = map[string]bool{}, map[string]bool{}
	for _, g := range asked {
		open[g] = true
	}
	for _, g := range resp.Groups {
		if !open[g.Group] || g.ErrorCode != 0 || g.AuthorizedOperations == math.MinInt32 {
			continue
		}
		delete(open, g.Group)
		denied[g.Group] = g.AuthorizedOperations&(1<<int32(kmsg.ACLOperationRead)) == 0
	}
	return denied, open
}
