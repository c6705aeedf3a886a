package harness

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupDescriber reads a Streams app's group through streamshift, whichever protocol it is on.
type groupDescriber struct {
	cl kmsg.Requestor
}

// newGroupDescriber describes through bootstrap: one address, or several
// streamshift instances (comma-separated), of which the one serving the
// group answers (seedRequestor).
func newGroupDescriber(bootstrap string) (*groupDescriber, error) {
	addrs := strings.Split(bootstrap, ",")
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		return nil, fmt.Errorf("describe client: %w", err)
	}
	if len(addrs) > 1 {
		return &groupDescriber{cl: seedRequestor{cl}}, nil
	}
	return &groupDescriber{cl: cl}, nil
}

func (d *groupDescriber) close() {
	switch cl := d.cl.(type) {
	case *kgo.Client:
		cl.Close()
	case seedRequestor:
		cl.Close()
	}
}

// seedRequestor sends a group request to each seed (each streamshift
// instance's bootstrap listener) until one answers other than
// NOT_COORDINATOR: any live instance carries the request to the group's
// owner, but a seed may be an instance the test killed, and while the
// group's log partition moves every instance answers NOT_COORDINATOR.
type seedRequestor struct{ *kgo.Client }

func (s seedRequestor) Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	var last kmsg.Response
	var lastErr error
	for _, b := range s.SeedBrokers() {
		last, lastErr = b.Request(ctx, req)
		if lastErr != nil {
			continue
		}
		if sr, ok := last.(*kmsg.StreamsGroupDescribeResponse); ok && len(sr.Groups) == 1 &&
			(sr.Groups[0].ErrorCode == kerr.NotCoordinator.Code || sr.Groups[0].ErrorCode == kerr.CoordinatorLoadInProgress.Code) {
			continue
		}
		return last, nil
	}
	return last, lastErr
}

// describedGroup is a group as a settle check needs it.
type describedGroup struct {
	protocol string // "streams" (served by streamshift) or the upstream classic group's protocol
	state    string
	epoch    int32
	members  int // members of the app: the anchor is not counted
	classic  int // of which classic members inside a streams group
	atRest   bool
	pending  []string // members not at their target assignment
}

func (g describedGroup) String() string {
	s := fmt.Sprintf("%s group %s epoch %d, %d members", g.protocol, g.state, g.epoch, g.members)
	if g.protocol == "streams" {
		s += fmt.Sprintf(" (%d classic)", g.classic)
	}
	if len(g.pending) > 0 {
		s += ", reconciling: " + strings.Join(g.pending, ", ")
	}
	return s
}

// describe asks StreamsGroupDescribe first (answered by streamshift for a group it serves);
// GROUP_ID_NOT_FOUND there means the group is the upstream's, read with DescribeGroups.
func (d *groupDescriber) describe(ctx context.Context, group string) (describedGroup, error) {
	sreq := kmsg.NewPtrStreamsGroupDescribeRequest()
	sreq.Groups = []string{group}
	sg, err := oneGroup(ctx, d.cl, "streams", group, sreq, func(r kmsg.Response) []kmsg.StreamsGroupDescribeResponseGroup {
		return r.(*kmsg.StreamsGroupDescribeResponse).Groups
	})
	if err != nil {
		return describedGroup{}, err
	}
	switch err := kerr.ErrorForCode(sg.ErrorCode); err {
	case nil:
		return streamsDescribed(sg), nil
	case kerr.GroupIDNotFound:
	default:
		return describedGroup{}, fmt.Errorf("describe streams group %s: %w", group, err)
	}
	creq := kmsg.NewPtrDescribeGroupsRequest()
	creq.Groups = []string{group}
	cg, err := oneGroup(ctx, d.cl, "classic", group, creq, func(r kmsg.Response) []kmsg.DescribeGroupsResponseGroup {
		return r.(*kmsg.DescribeGroupsResponse).Groups
	})
	if err != nil {
		return describedGroup{}, err
	}
	if err := kerr.ErrorForCode(cg.ErrorCode); err != nil {
		return describedGroup{}, fmt.Errorf("describe classic group %s: %w", group, err)
	}
	g := describedGroup{protocol: "classic " + cg.Protocol, state: cg.State, atRest: cg.State == "Stable"}
	for _, m := range cg.Members {
		if m.InstanceID != nil && strings.HasPrefix(*m.InstanceID, "streamshift-") {
			continue // the anchor of a group streamshift served
		}
		g.members++
	}
	return g, nil
}

func streamsDescribed(sg kmsg.StreamsGroupDescribeResponseGroup) describedGroup {
	g := describedGroup{protocol: "streams", state: sg.State, epoch: sg.Epoch, members: len(sg.Members)}
	for _, m := range sg.Members {
		if m.IsClassic {
			g.classic++
		}
		if m.MemberEpoch != sg.AssignmentEpoch || assignmentKey(m.Assignment) != assignmentKey(m.TargetAssignment) {
			id := m.ClientID
			if m.InstanceID != nil {
				id += "/" + *m.InstanceID
			}
			g.pending = append(g.pending, fmt.Sprintf("%s@%d", id, m.MemberEpoch))
		}
	}
	sort.Strings(g.pending)
	g.atRest = sg.State == "Stable" && len(g.pending) == 0
	return g
}

// assignmentKey is a canonical text of an assignment (tasks sorted), for comparing two.
func assignmentKey(a kmsg.StreamsAssignment) string {
	part := func(kind string, ts []kmsg.TaskIDs) string {
		var ids []string
		for _, t := range ts {
			for _, p := range t.Partitions {
				ids = append(ids, fmt.Sprintf("%s_%d", t.SubtopologyID, p))
			}
		}
		sort.Strings(ids)
		return kind + ":" + strings.Join(ids, ",")
	}
	return part("a", a.ActiveTasks) + " " + part("s", a.StandbyTasks) + " " + part("w", a.WarmupTasks)
}

// oneGroup sends a describe request of one group and returns the one group
// of its answer.
func oneGroup[G any](ctx context.Context, cl kmsg.Requestor, protocol, group string, req kmsg.Request, groups func(kmsg.Response) []G) (G, error) {
	var none G
	resp, err := cl.Request(ctx, req)
	if err != nil {
		return none, fmt.Errorf("describe %s group %s: %w", protocol, group, err)
	}
	gs := groups(resp)
	if len(gs) != 1 {
		return none, fmt.Errorf("describe %s group %s: %d groups in the answer", protocol, group, len(gs))
	}
	return gs[0], nil
}
