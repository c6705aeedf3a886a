package upstream

import (
	"context"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// requesterFunc answers every request with its function.
type requesterFunc func(kmsg.Request) (kmsg.Response, error)

func (f requesterFunc) Request(_ context.Context, req kmsg.Request) (kmsg.Response, error) {
	return f(req)
}

func TestDescribeUpstreamGroup(t *testing.T) {
	var groups []kmsg.DescribeGroupsResponseGroup
	g := NewGroups(requesterFunc(func(req kmsg.Request) (kmsg.Response, error) {
		if got := req.(*kmsg.DescribeGroupsRequest).Groups; len(got) != 1 || got[0] != "app" {
			t.Errorf("described %v, want [app]", got)
		}
		resp := kmsg.NewPtrDescribeGroupsResponse()
		resp.Groups = groups
		return resp, nil
	}))
	// The group's error code is the caller's: not an error here.
	groups = []kmsg.DescribeGroupsResponseGroup{{Group: "app", ErrorCode: kerr.NotCoordinator.Code}}
	if d, err := g.DescribeUpstreamGroup(context.Background(), "app"); err != nil || d.ErrorCode != kerr.NotCoordinator.Code {
		t.Fatalf("described %+v, %v", d, err)
	}
	groups = nil
	if _, err := g.DescribeUpstreamGroup(context.Background(), "app"); err == nil {
		t.Fatal("an answer without the group is no error")
	}
	failed := errors.New("dial: refused")
	g = NewGroups(requesterFunc(func(kmsg.Request) (kmsg.Response, error) { return nil, failed }))
	if _, err := g.DescribeUpstreamGroup(context.Background(), "app"); !errors.Is(err, failed) {
		t.Fatalf("failed request: %v", err)
	}
}

func TestFenceMembers(t *testing.T) {
	codes := []int16{kerr.UnknownMemberID.Code, 0}
	g := NewGroups(requesterFunc(func(req kmsg.Request) (kmsg.Response, error) {
		lr := req.(*kmsg.LeaveGroupRequest)
		resp := kmsg.NewPtrLeaveGroupResponse()
		for i, m := range lr.Members {
			rm := kmsg.NewLeaveGroupResponseMember()
			rm.MemberID, rm.ErrorCode = m.MemberID, codes[i]
			resp.Members = append(resp.Members, rm)
		}
		return resp, nil
	}))
	members := []kmsg.LeaveGroupRequestMember{{MemberID: "a"}, {MemberID: "b"}}
	// A member the upstream does not know is gone already.
	if err := g.FenceMembers(context.Background(), "app", members); err != nil {
		t.Fatal(err)
	}
	codes[1] = kerr.FencedInstanceID.Code
	if err := g.FenceMembers(context.Background(), "app", members); !errors.Is(err, kerr.FencedInstanceID) {
		t.Fatalf("fencing refused for b: %v", err)
	}
}
