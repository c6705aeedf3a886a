package proxy

import "github.com/twmb/franz-go/pkg/kmsg"

// rewriteMetadata replaces every broker endpoint by the proxy's endpoint for
// that node. Brokers without a proxy port are dropped: a client then sees
// their partitions as leaderless (retriable) instead of reaching the broker
// around the proxy.
func rewriteMetadata(t *nodeTable, r kmsg.Response) bool {
	resp := r.(*kmsg.MetadataResponse)
	resp.Brokers = rewriteNodes(t, resp.Brokers, true, func(b *kmsg.MetadataResponseBroker) (*int32, *string, *int32) {
		return &b.NodeID, &b.Host, &b.Port
	})
	return true
}
