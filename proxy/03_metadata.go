package proxy

import "github.com/twmb/franz-go/pkg/kmsg"

// rewriteMetadata replaces every broker endpoint by the proxy's endpoint for
// that node. Brokers without a proxy port are dropped: a client then sees
// their partitions as leaderless (retriable) instead of reaching the broker
// around the proxy.
func rewriteMetadata(t *nodeTable, r kmsg.Response) bool {
	resp := r.(*kmsg.MetadataResponse)
	kept := resp.Brokers[:0]
	for _, b := range resp.Brokers {
		t.observe(b.NodeID, b.Host, b.Port)
		host, port, ok := t.advertised(b.NodeID)
		if !ok {
			continue
		}
		b.Host, b.Port = host, port
		kept = append(kept, b)
	}
	resp.Brokers = kept
	return true
}
