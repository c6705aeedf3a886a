package proxy

import "github.com/twmb/franz-go/pkg/kmsg"

// rewriteDescribeCluster is rewriteMetadata for DescribeCluster. Only broker
// endpoints (EndpointType 1, the default) are learned: controllers
// (EndpointType 2, KIP-919) have node ids that can collide with brokers' and
// are not reachable through node ports. Brokers answer a controller request
// with an error and no endpoints anyway.
func rewriteDescribeCluster(t *nodeTable, r kmsg.Response) bool {
	resp := r.(*kmsg.DescribeClusterResponse)
	learn := resp.Version < 1 || resp.EndpointType != 2
	resp.Brokers = rewriteNodes(t, resp.Brokers, learn, func(b *kmsg.DescribeClusterResponseBroker) (*int32, *string, *int32) {
		return &b.NodeID, &b.Host, &b.Port
	})
	return true
}
