package route

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/proxy"
)

// ListGroups (key 16): v0-v5 (the upstream's range, capped to kmsg's),
// unadvertised.
//
// By version:
//   - v0-v3: no filters; the owned groups are merged into the upstream's
//     answer (their state from v4, their type from v5 are in the response).
//   - v4: StatesFilter; v5: TypesFilter (KIP-848). Both go upstream
//     removed, and the proxy applies them to the merged answer, so the
//     upstream's entry of an owned group is always found and replaced.

// listGroups routes ListGroups at the upstream's versions (capped to what
// kmsg decodes), unadvertised. It merges the owned groups into ListGroups,
// with protocol type and group type "streams" and their state, honouring
// the states and types filters as Kafka does.
//
// The upstream lists an owned group as a classic group (the anchor is its
// member) on exactly one broker, its coordinator, as Kafka lists a streams
// group: the streams group replaces that entry, so a client that asks every
// broker (the Java admin client does, and keeps duplicates) sees it once. To
// find that entry whatever its upstream state and type, the request goes
// upstream without filters (v4+) and the proxy applies them to the answer.
// An owned group the upstream does not list (its anchor has not joined yet,
// or the upstream forgot an empty group) is added to the answer of its
// upstream coordinator (Options.CoordinatorNode), or of every broker
// when that is unknown. With several instances, the owned groups are every
// instance's served groups (peersServedGroups), filtered and placed here.
func (rs *Routes) listGroups(req *proxy.Request, r *kmsg.ListGroupsRequest, out proxy.Outcome) {
	all := make(chan []coordinator.ListedGroup, 1)
	rs.o.Coordinator.ListGroups(nil, func(gs []coordinator.ListedGroup) { all <- gs })
	var owned []coordinator.ListedGroup
	select {
	case owned = <-all:
	case <-req.Done():
		out.Forward()
		return
	}
	// With several instances, the other instances' served groups too: a
	// peer that does not answer makes the whole answer retriable, which
	// beats an incomplete list.
	others, err := rs.peersServedGroups(req)
	if err != nil {
		resp := kmsg.NewPtrListGroupsResponse()
		resp.ErrorCode = kafkaCode(err)
		out.Respond(resp)
		return
	}
	// A group whose partition moves may be listed by two instances: once.
	have := make(map[string]bool, len(owned))
	for _, g := range owned {
		have[g.GroupID] = true
	}
	for _, g := range others {
		if !have[g.GroupID] {
			have[g.GroupID] = true
			owned = append(owned, g)
		}
	}
	// Kafka lists only the groups the client may DESCRIBE (or all, with
	// DESCRIBE on the cluster); the upstream filters the groups it lists,
	// the owned groups it does not list are filtered here
	// (authorize.go).
	ids := make([]string, len(owned))
	for i, g := range owned {
		ids[i] = g.GroupID
	}
	if denied := rs.groupsDenied(req, kmsg.ACLOperationDescribe, ids); denied != nil {
		owned = slices.DeleteFunc(owned, func(g coordinator.ListedGroup) bool { return denied[g.GroupID] })
	}
	states := map[string]bool{}
	for _, s := range r.StatesFilter {
		states[strings.ToLower(strings.TrimSpace(s))] = true
	}
	ownedByID := map[string]coordinator.ListedGroup{}
	for _, g := range owned {
		ownedByID[g.GroupID] = g
	}
	listed := func(g coordinator.ListedGroup) (kmsg.ListGroupsResponseGroup, bool) {
		ok := listsType(r.TypesFilter, "streams") && (len(states) == 0 || states[g.State.StateFilterName()])
		return listedGroup(g), ok
	}
	rest := func() kmsg.Request {
		fwd := *r
		fwd.StatesFilter, fwd.TypesFilter = nil, nil
		return &fwd
	}
	// Every listing goes upstream: the upstream lists all other groups.
	splitForward(req, out, len(owned), 1, rest, req.Version, func(lr *kmsg.ListGroupsResponse) *kmsg.ListGroupsResponse {
		kept := make([]kmsg.ListGroupsResponseGroup, 0, len(lr.Groups))
		seen := map[string]bool{}
		for _, g := range lr.Groups {
			if og, ok := ownedByID[g.Group]; ok {
				seen[g.Group] = true
				if lg, ok := listed(og); ok {
					kept = append(kept, lg)
				}
				continue
			}
			if (len(states) == 0 || states[strings.ToLower(g.GroupState)]) && listsType(r.TypesFilter, g.GroupType) {
				kept = append(kept, g)
			}
		}
		for _, og := range owned {
			if seen[og.GroupID] || !rs.listsHere(og.GroupID, req.Client.Node) {
				continue
			}
			if lg, ok := listed(og); ok {
				kept = append(kept, lg)
			}
		}
		lr.Groups = kept
		return lr
	})
}

// listedGroup is a served group's ListGroups entry.
func listedGroup(g coordinator.ListedGroup) kmsg.ListGroupsResponseGroup {
	lg := kmsg.NewListGroupsResponseGroup()
	lg.Group, lg.ProtocolType, lg.GroupState, lg.GroupType = g.GroupID, "streams", g.State.String(), "streams"
	return lg
}

// ServedGroups lists the groups this instance serves, unfiltered and with
// no upstream call: the answer to another instance's served-groups call
// (proxy.SetServedGroups), whose client's ListGroups needs them.
func (rs *Routes) ServedGroups(ctx context.Context) ([]kmsg.ListGroupsResponseGroup, error) {
	all := make(chan []coordinator.ListedGroup, 1)
	rs.o.Coordinator.ListGroups(nil, func(gs []coordinator.ListedGroup) { all <- gs })
	select {
	case gs := <-all:
		out := make([]kmsg.ListGroupsResponseGroup, len(gs))
		for i, g := range gs {
			out[i] = listedGroup(g)
		}
		return out, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// peersServedGroups asks every other instance of the map for the groups
// it serves, in parallel (docs/one-address.md §4 "ListGroups"); none in a
// mixed release, alone, or for a request that hopped here. A peer that
// does not answer fails it with COORDINATOR_NOT_AVAILABLE.
func (rs *Routes) peersServedGroups(req *proxy.Request) ([]coordinator.ListedGroup, error) {
	c := rs.o.Cluster
	if c == nil || req.Client.Remote() || !c.Hops() {
		return nil, nil
	}
	peers := c.Peers()
	got := make([][]kmsg.ListGroupsResponseGroup, len(peers))
	errs := make([]error, len(peers))
	ctx, cancel := context.WithTimeout(context.Background(), c.ForwardTimeout())
	defer cancel()
	var wg sync.WaitGroup
	for i, peer := range peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = c.ServedGroups(ctx, peer, req, c.ForwardTimeout())
		}()
	}
	wg.Wait()
	var out []coordinator.ListedGroup
	for i, peer := range peers {
		if errs[i] != nil {
			return nil, &clusterError{kerr.CoordinatorNotAvailable, fmt.Sprintf("the groups streamshift instance %s serves: %v", peer, errs[i])}
		}
		for _, lg := range got[i] {
			if st, ok := parseGroupState(lg.GroupState); ok {
				out = append(out, coordinator.ListedGroup{GroupID: lg.Group, State: st})
			}
		}
	}
	return out, nil
}

// parseGroupState is the streams group state named s (GroupState.String).
func parseGroupState(s string) (streams.GroupState, bool) {
	for st := streams.GroupEmpty; st <= streams.GroupStable; st++ {
		if st.String() == s {
			return st, true
		}
	}
	return 0, false
}

// listsType reports whether a ListGroups types filter (v5+, case-insensitive,
// empty: all types) admits type t.
func listsType(filter []string, t string) bool {
	if len(filter) == 0 {
		return true
	}
	for _, f := range filter {
		if strings.EqualFold(strings.TrimSpace(f), t) {
			return true
		}
	}
	return false
}

// listsHere reports whether a ListGroups answer from upstream node node
// (-1: the bootstrap connection, any broker) should carry group: on its
// upstream coordinator only, when that is known.
func (rs *Routes) listsHere(group string, node int32) bool {
	if rs.o.CoordinatorNode == nil || node < 0 {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	coord, err := rs.o.CoordinatorNode(ctx, group)
	return err != nil || coord == node
}
