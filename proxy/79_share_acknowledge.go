package proxy

import "github.com/twmb/franz-go/pkg/kmsg"

// rewriteShareAcknowledge rewrites the NodeEndpoints of ShareAcknowledge (KIP-932).
func rewriteShareAcknowledge(t *nodeTable, r kmsg.Response) bool {
	resp := r.(*kmsg.ShareAcknowledgeResponse)
	return rewriteEndpointList(t, &resp.NodeEndpoints, func(b *kmsg.ShareAcknowledgeResponseNodeEndpoint) (*int32, *string, *int32) {
		return &b.NodeID, &b.Host, &b.Port
	})
}
