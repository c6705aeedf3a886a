package proxy

import "github.com/twmb/franz-go/pkg/kmsg"

// rewriteProduce rewrites the KIP-951 NodeEndpoints (v10+), a tagged field a
// broker fills only when it answers NOT_LEADER_OR_FOLLOWER with the new
// leader. Produce is not capped below v10 like Fetch is: v11/v12 carry
// transaction version 2 (KIP-890), which 4.x clients require when the cluster
// enables it. The response is small, and re-encoded only when endpoints are
// present.
func rewriteProduce(t *nodeTable, r kmsg.Response) bool {
	resp := r.(*kmsg.ProduceResponse)
	return rewriteEndpointList(t, &resp.Brokers, func(b *kmsg.ProduceResponseBroker) (*int32, *string, *int32) {
		return &b.NodeID, &b.Host, &b.Port
	})
}
