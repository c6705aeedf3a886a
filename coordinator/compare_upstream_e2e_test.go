//go:build e2e

package coordinator_test

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/coordinator"
	"github.com/streamshift/streamshift/upstream"
)

// The differential tests against Kafka 4.4 (compare_e2e_test.go) read the
// broker's topics and create internal topics as cmd/streamshift does.
func init() {
	coordinator.CompareUpstream = func(ctx context.Context, cl *kgo.Client) (coordinator.MetadataSource, coordinator.TopicCreator, error) {
		md := upstream.NewMetadata(kadm.NewClient(cl), time.Second)
		if err := md.Refresh(ctx); err != nil {
			return nil, nil, err
		}
		go md.Run(ctx)
		return md, upstream.NewTopicCreator(cl, md, 10*time.Second), nil
	}
}
