package status

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator"
)

// Coordinator is what the status page reads of the coordinator: its
// read-only entry points, each answered on the groups' executors.
type Coordinator interface {
	ListGroups(states []string, done func([]coordinator.ListedGroup))
	StreamsGroupDescribe(req *kmsg.StreamsGroupDescribeRequest, respond func(*kmsg.StreamsGroupDescribeResponse))
}

// listGroups waits for ListGroups, or ctx.
func listGroups(ctx context.Context, c Coordinator) ([]coordinator.ListedGroup, error) {
	ch := make(chan []coordinator.ListedGroup, 1)
	c.ListGroups(nil, func(gs []coordinator.ListedGroup) { ch <- gs })
	select {
	case gs := <-ch:
		return gs, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("list groups: %w", ctx.Err())
	}
}

// describeGroups waits for StreamsGroupDescribe of ids, or ctx.
func describeGroups(ctx context.Context, c Coordinator, ids []string) ([]kmsg.StreamsGroupDescribeResponseGroup, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Version = 1
	req.Groups = ids
	ch := make(chan *kmsg.StreamsGroupDescribeResponse, 1)
	c.StreamsGroupDescribe(req, func(r *kmsg.StreamsGroupDescribeResponse) { ch <- r })
	select {
	case r := <-ch:
		return r.Groups, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("describe groups: %w", ctx.Err())
	}
}
