package proxy

import "github.com/twmb/franz-go/pkg/kmsg"

// rewriteShareFetch rewrites the NodeEndpoints of ShareFetch (KIP-932). Share
// groups are rare enough that decoding their fetch responses is acceptable.
func rewriteShareFetch(t *nodeTable, r kmsg.Response) bool {
	resp := r.(*kmsg.ShareFetchResponse)
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
