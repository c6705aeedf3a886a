//go:build e2e

package e2e_test

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// describeStreamsGroup sends StreamsGroupDescribe for group to node 1 (the
// e2e broker's id, which streamshift keeps) through seed: an instance's
// node port, a lone instance's bootstrap or a load balancer's address.
func describeStreamsGroup(ctx context.Context, seed, group string) (kmsg.StreamsGroupDescribeResponseGroup, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seed))
	if err != nil {
		return kmsg.StreamsGroupDescribeResponseGroup{}, err
	}
	defer cl.Close()
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Groups = []string{group}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl.Broker(1))
	if err != nil {
		return kmsg.StreamsGroupDescribeResponseGroup{}, err
	}
	return resp.Groups[0], nil
}
