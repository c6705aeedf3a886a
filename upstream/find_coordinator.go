package upstream

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// FindCoordinatorNode returns a CoordinatorNode asking the upstream with
// FindCoordinator through cl, answers cached for a minute (a group's
// coordinator moves only when __consumer_offsets leadership does).
func FindCoordinatorNode(cl *kgo.Client) func(ctx context.Context, groupID string) (int32, error) {
	type entry struct {
		node int32
		at   time.Time
	}
	var (
		mu    sync.Mutex
		cache = map[string]entry{}
	)
	return func(ctx context.Context, groupID string) (int32, error) {
		mu.Lock()
		e, ok := cache[groupID]
		mu.Unlock()
		if ok && time.Since(e.at) < time.Minute {
			return e.node, nil
		}
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.CoordinatorKey, req.CoordinatorKeys = groupID, []string{groupID}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return 0, fmt.Errorf("find coordinator of %s: %w", groupID, err)
		}
		node, code := resp.NodeID, resp.ErrorCode
		if len(resp.Coordinators) > 0 {
			node, code = resp.Coordinators[0].NodeID, resp.Coordinators[0].ErrorCode
		}
		if err := kerr.ErrorForCode(code); err != nil {
			return 0, fmt.Errorf("find coordinator of %s: %w", groupID, err)
		}
		mu.Lock()
		cache[groupID] = entry{node, time.Now()}
		mu.Unlock()
		return node, nil
	}
}
