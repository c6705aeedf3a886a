package proxy

import "github.com/twmb/franz-go/pkg/kmsg"

// rewriteShareFetch rewrites the NodeEndpoints of ShareFetch (KIP-932). Share
// groups are rare enough that decoding their fetch responses is acceptable.
func rewriteShareFetch(t *nodeTable, r kmsg.Response) bool {
	resp := r.(*kmsg.ShareFetchResponse)
	return rewriteEndpointList(t, &resp.NodeEndpoints, func(b *kmsg.ShareFetchResponseNodeEndpoint) (*int32, *string, *int32) {
		return &b.NodeID, &b.Host, &b.Port
	})
}
