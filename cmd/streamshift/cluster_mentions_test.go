package main

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestClusterDescribeRepeatedMentions: a StreamsGroupDescribe naming groups
// of two owners several times each, and an invalid id (issue #42): the
// request is split by owner as the request of its distinct groups, and
// the answer repeats each group's description per mention, in request
// order, as the split answers a request without repeats.
func TestClusterDescribeRepeatedMentions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	ins, owners, _ := twoInstances(t, ctx)
	a, b := ins[0], ins[1]
	sA, sB := groupOwnedBy(owners, a.id, "app-a"), groupOwnedBy(owners, b.id, "app-b")
	ma, mb := &member{id: "ma"}, &member{id: "mb"}
	ma.joinUntilAssigned(t, ctx, b, sA, "in")
	mb.joinUntilAssigned(t, ctx, a, sB, "in")

	once := map[string]kmsg.StreamsGroupDescribeResponseGroup{}
	for _, g := range []string{sA, sB} {
		once[g] = describeStreams(t, ctx, a, g)
	}
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Groups = []string{sA, sB, sA, "", sB, sA, ""}
	resp, err := req.RequestWith(ctx, a.node0())
	if err != nil || len(resp.Groups) != len(req.Groups) {
		t.Fatalf("describe: %v, %+v", err, resp)
	}
	for i, g := range resp.Groups {
		want := req.Groups[i]
		if g.Group != want {
			t.Fatalf("answer %d is of %q, want %q (request order)", i, g.Group, want)
		}
		if want == "" {
			if g.ErrorCode != kerr.InvalidGroupID.Code {
				t.Fatalf("answer %d: %+v, want INVALID_GROUP_ID", i, g)
			}
			continue
		}
		if !reflect.DeepEqual(g, once[want]) {
			t.Fatalf("answer %d of %s differs from its description alone:\n%+v\n%+v", i, want, g, once[want])
		}
	}
}
