package proxyadapter

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/proxy"
)

// listGroups forwards ListGroups and merges the owned groups into the answer:
// the upstream lists an owned group as a classic group (the anchor is its
// member), so that entry is replaced by the streams group, with protocol type
// and group type "streams" and its state, honouring the states and types
// filters as Kafka does.
//
// Every ListGroups answer gets the owned groups, whichever broker connection
// it came on: a client that asks every broker (the Java admin client does)
// sees them once per broker on a multi-broker cluster.
func (a *admin) listGroups(req *proxy.Request, out proxy.Outcome) {
	r := req.Body.(*kmsg.ListGroupsRequest)
	all := make(chan []coordinator.ListedGroup, 1)
	a.c.ListGroups(nil, func(gs []coordinator.ListedGroup) { all <- gs })
	var owned []coordinator.ListedGroup
	select {
	case owned = <-all:
	case <-req.Done():
		out.Forward()
		return
	}
	if len(owned) == 0 {
		out.Forward()
		return
	}
	ownedIDs := map[string]bool{}
	for _, g := range owned {
		ownedIDs[g.GroupID] = true
	}
	var add []kmsg.ListGroupsResponseGroup
	if listsType(r.TypesFilter, "streams") {
		states := map[string]bool{}
		for _, s := range r.StatesFilter {
			states[strings.ToLower(s)] = true
		}
		for _, g := range owned {
			if len(states) > 0 && !states[g.State.StateFilterName()] {
				continue
			}
			lg := kmsg.NewListGroupsResponseGroup()
			lg.Group, lg.ProtocolType, lg.GroupState, lg.GroupType = g.GroupID, "streams", g.State.String(), "streams"
			add = append(add, lg)
		}
	}
	out.ForwardRewritten(r, req.Version, func(resp kmsg.Response) kmsg.Response {
		lr := resp.(*kmsg.ListGroupsResponse)
		kept := lr.Groups[:0]
		for _, g := range lr.Groups {
			if !ownedIDs[g.Group] {
				kept = append(kept, g)
			}
		}
		lr.Groups = append(kept, add...)
		return lr
	})
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
