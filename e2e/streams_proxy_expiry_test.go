//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/streamshift/streamshift/e2e/harness"
)

// TestStreamsProxyEmptyGroupExpires: a Kafka Streams 4.4 app on the streams
// protocol through streamshift on Kafka 3.9 stops; its streams group is
// Empty, and after coordinator.offsets-retention-check-interval (5s here)
// streamshift deletes it and its anchor member leaves the upstream group,
// which the broker then shows Empty with the app's committed offsets (now
// under the broker's own Empty-group retention). A new instance starts a
// fresh group that resumes from those offsets: the output, exactly once, is
// exact.
func TestStreamsProxyEmptyGroupExpires(t *testing.T) {
	t.Parallel()
	const group = "e2e-count"
	var upstream string
	harness.RunScenario(t, harness.Scenario{
		Name:          "an Empty streams group expires through streamshift on 3.9",
		Broker:        harness.Kafka39,
		AppBuild:      harness.App44,
		GroupProtocol: "streams",
		Guarantee:     "exactly_once_v2",
		Hold:          5 * time.Second,
		Route: func(ctx context.Context, r *harness.Run) (string, error) {
			upstream = r.Broker.Bootstrap
			env := append([]string{"STREAMSHIFT_COORDINATOR_OFFSETS_RETENTION_CHECK_INTERVAL=5s"}, nativeTestSettings...)
			addr, stop := startStreamshift(ctx, r.T, r.Dir, upstream, "expiry", env...)
			r.T.Cleanup(stop)
			return addr, nil
		},
		Steps: []harness.Step{
			harness.StartInstances("a1"),
			{Name: "stop a1, the group expires, a2 starts a fresh one", Do: func(ctx context.Context, r *harness.Run) error {
				if err := checkUpstreamGroup(ctx, upstream, group, "streamshift-expiry"); err != nil {
					return fmt.Errorf("before the stop: %w", err)
				}
				if err := r.StopApp("a1"); err != nil {
					return err
				}
				if err := waitUpstreamEmptyWithOffsets(ctx, upstream, group); err != nil {
					return err
				}
				_, err := r.StartApp("a2")
				return err
			}},
			{Name: "the fresh group's anchor upstream", Check: true, Do: func(ctx context.Context, r *harness.Run) error {
				return checkUpstreamGroup(ctx, upstream, group, "streamshift-expiry")
			}},
		},
	})
}

// waitUpstreamEmptyWithOffsets waits until the broker shows the group Empty
// (the anchor left) with committed offsets for every input partition.
func waitUpstreamEmptyWithOffsets(ctx context.Context, upstream, group string) error {
	return waitUpstreamGroup(ctx, upstream, group, 90*time.Second, func(g kadm.DescribedGroup) error {
		if g.State != "Empty" || len(g.Members) != 0 {
			return fmt.Errorf("upstream group: state %s, %d members; want Empty once the streams group expired", g.State, len(g.Members))
		}
		return nil
	})
}
