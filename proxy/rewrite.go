package proxy

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// addressRewriter rewrites the node endpoints of a decoded response in place,
// recording the upstream endpoints in the node table first, and says whether it
// changed anything (an unchanged response is forwarded as the original bytes).
type addressRewriter func(t *nodeTable, resp kmsg.Response) bool

// addressRewriters are the responses that carry broker addresses; everything
// else is forwarded without decoding. Fetch (NodeEndpoints from v16) is absent
// on purpose: ApiVersions caps it at v15 so the hottest response is never decoded
// (see 18_api_versions.go).
//
// DescribeQuorum is absent on purpose too: its v2 Nodes (KIP-853) are the
// controllers' CONTROLLER-listener endpoints, which no client dials from this
// response (the Java admin hands them out as QuorumInfo.Node data,
// kafka-metadata-quorum prints them; controllers are managed with
// --bootstrap-controller, KIP-919). The proxy's node ports front broker
// listeners only, so rewriting them would point a controller endpoint at a
// broker listener, and capping to v1 would only hide them: they pass as the
// upstream sent them.
var addressRewriters = map[int16]addressRewriter{
	int16(kmsg.Produce):          rewriteProduce,
	int16(kmsg.Metadata):         rewriteMetadata,
	int16(kmsg.FindCoordinator):  rewriteFindCoordinator,
	int16(kmsg.DescribeCluster):  rewriteDescribeCluster,
	int16(kmsg.ShareFetch):       rewriteShareFetch,
	int16(kmsg.ShareAcknowledge): rewriteShareAcknowledge,
}

// needsRewrite reports whether responses of this key and version may carry
// addresses. Produce gained NodeEndpoints in v10 (KIP-951); below that its
// response is forwarded untouched.
func needsRewrite(key, version int16) bool {
	if _, ok := addressRewriters[key]; !ok {
		return false
	}
	return key != int16(kmsg.Produce) || version >= 10
}

// rewriteResponse decodes a response frame, rewrites its addresses and returns
// the new frame, or nil when the original bytes can go to the client unchanged.
func rewriteResponse(t *nodeTable, key, version int16, frame []byte) ([]byte, error) {
	msg := frame[4:]
	resp, err := kafkaframe.DecodeResponse(key, version, msg)
	if err != nil {
		return nil, err
	}
	if !addressRewriters[key](t, resp) {
		return nil, nil
	}
	corr := int32(uint32(msg[0])<<24 | uint32(msg[1])<<16 | uint32(msg[2])<<8 | uint32(msg[3]))
	return kafkaframe.AppendResponse(make([]byte, 0, len(frame)+64), corr, resp), nil
}

// rewriteNodes replaces each node's upstream endpoint by the proxy's endpoint
// for that node, in place, and returns the kept prefix. Nodes without a proxy
// port are dropped so a client never reaches a broker around the proxy. The
// node types of the responses differ only by name, so endpoint returns
// pointers to a node's id, host and port. learn says whether the upstream
// endpoints are recorded in the table first.
func rewriteNodes[N any](t *nodeTable, nodes []N, learn bool, endpoint func(*N) (*int32, *string, *int32)) []N {
	kept := nodes[:0]
	for _, n := range nodes {
		id, host, port := endpoint(&n)
		if learn {
			t.observe(*id, *host, *port)
		}
		h, p, ok := t.advertised(*id)
		if !ok {
			continue
		}
		*host, *port = h, p
		kept = append(kept, n)
	}
	return kept
}

// rewriteEndpointList rewrites a NodeEndpoints list that a broker fills only
// when it names a new leader (Produce v10+, KIP-951; ShareFetch and
// ShareAcknowledge, KIP-932), and says whether there was one: a response
// without endpoints is forwarded as the original bytes.
func rewriteEndpointList[N any](t *nodeTable, nodes *[]N, endpoint func(*N) (*int32, *string, *int32)) bool {
	if len(*nodes) == 0 {
		return false
	}
	*nodes = rewriteNodes(t, *nodes, true, endpoint)
	return true
}
