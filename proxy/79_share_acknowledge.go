package proxy

import "github.com/twmb/franz-go/pkg/kmsg"

// rewriteShareAcknowledge rewrites the NodeEndpoints of ShareAcknowledge (KIP-932).
func rewriteShareAcknowledge(t *nodeTable, r kmsg.Response) bool {
	resp := r.(*kmsg.ShareAcknowledgeResponse)
	if len(resp.NodeEndpoints) == 0 {
		return false
	}
	kept := resp.NodeEndpoints[:0]
	for _, b := range resp.NodeEndpoints {
		t.observe(b.NodeID, b.Host, b.Port)
		host, port, ok := t.advertised(b.NodeID)
		if !ok {
			continue
		}
		b.Host, b.Port = host, port
		kept = append(kept, b)
	}
	resp.NodeEndpoints = kept
	return true
}
