package upstream

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Requester sends a request to the right upstream broker; *kgo.Client
// implements it (group requests go to the group's coordinator).
type Requester interface {
	Request(ctx context.Context, req kmsg.Request) (kmsg.Response, error)
}

// Groups are the classic group calls of the ownership claim and the online
// migration, through the control-plane client: DescribeGroups of one group,
// and the LeaveGroup that fences taken-over members.
type Groups struct {
	client Requester
}

// NewGroups returns the group calls through client.
func NewGroups(client Requester) *Groups { return &Groups{client: client} }

// DescribeUpstreamGroup describes one group (coordinator.UpstreamGroups).
// The group's error code is the caller's to read; err is a request that
// failed or an answer about some other number of groups.
func (g *Groups) DescribeUpstreamGroup(ctx context.Context, group string) (kmsg.DescribeGroupsResponseGroup, error) {
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = []string{group}
	resp, err := g.client.Request(ctx, req)
	if err != nil {
		return kmsg.DescribeGroupsResponseGroup{}, fmt.Errorf("describe upstream group %s: %w", group, err)
	}
	gs := resp.(*kmsg.DescribeGroupsResponse).Groups
	if len(gs) != 1 {
		return kmsg.DescribeGroupsResponseGroup{}, fmt.Errorf("describe upstream group %s: %d groups in the answer", group, len(gs))
	}
	return gs[0], nil
}

// FenceMembers removes the members from the upstream group with one
// LeaveGroup naming them all (the control-plane client speaks v3+ with any
// 2.4+ broker). A member the upstream does not know any more is gone
// already.
func (g *Groups) FenceMembers(ctx context.Context, group string, members []kmsg.LeaveGroupRequestMember) error {
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = group
	req.Members = members
	resp, err := g.client.Request(ctx, req)
	if err != nil {
		return fmt.Errorf("fence classic members of %s upstream: %w", group, err)
	}
	lr := resp.(*kmsg.LeaveGroupResponse)
	if err := kerr.ErrorForCode(lr.ErrorCode); err != nil {
		return fmt.Errorf("fence classic members of %s upstream: %w", group, err)
	}
	for _, m := range lr.Members {
		if err := kerr.ErrorForCode(m.ErrorCode); err != nil && !errors.Is(err, kerr.UnknownMemberID) {
			return fmt.Errorf("fence member %s of %s upstream: %w", m.MemberID, group, err)
		}
	}
	return nil
}
