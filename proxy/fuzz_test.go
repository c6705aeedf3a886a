package proxy

import (
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

func FuzzRequestHeader(f *testing.F) {
	id := "client"
	for _, req := range []kmsg.Request{
		&kmsg.ProduceRequest{Version: 3, Acks: -1},
		&kmsg.ProduceRequest{Version: 9, Acks: 0, TransactionID: &id},
		&kmsg.ProduceRequest{Version: 13, Acks: 1},
		&kmsg.ApiVersionsRequest{Version: 4, ClientSoftwareName: "x"},
		&kmsg.StreamsGroupHeartbeatRequest{Version: 1, Group: "g"},
		&kmsg.ControlledShutdownRequest{Version: 0},
	} {
		f.Add(kafkaframe.AppendRequest(nil, 1, &id, req)[4:])
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		h, err := kafkaframe.ParseRequestHeader(msg)
		if err == nil && (h.BodyAt < kafkaframe.MinRequestSize || h.BodyAt > len(msg)) {
			t.Fatalf("body offset %d outside %d bytes", h.BodyAt, len(msg))
		}
		if len(msg) >= kafkaframe.MinRequestSize {
			if key, _, _ := kafkaframe.FixedHeader(msg); key == 0 {
				_, _ = produceAcks(msg)
			}
		}
	})
}

// responseSeeds are valid responses of every rewritten key, with addresses.
func responseSeeds() map[int16][]kmsg.Response {
	host := "upstream.example"
	rack := "r"
	md := kmsg.NewPtrMetadataResponse()
	md.Version = 12
	md.Brokers = []kmsg.MetadataResponseBroker{{NodeID: 1, Host: host, Port: 9092, Rack: &rack}, {NodeID: 500, Host: host, Port: 9093}}
	dc := kmsg.NewPtrDescribeClusterResponse()
	dc.Version = 2
	dc.Brokers = []kmsg.DescribeClusterResponseBroker{{NodeID: 2, Host: host, Port: 9092}}
	fc3 := kmsg.NewPtrFindCoordinatorResponse()
	fc3.Version = 3
	fc3.NodeID, fc3.Host, fc3.Port = 1, host, 9092
	fc4 := kmsg.NewPtrFindCoordinatorResponse()
	fc4.Version = 6
	fc4.Coordinators = []kmsg.FindCoordinatorResponseCoordinator{{Key: "g", NodeID: 1, Host: host, Port: 9092}, {Key: "h", NodeID: 900, Host: host, Port: 1}}
	pr := kmsg.NewPtrProduceResponse()
	pr.Version = 12
	pr.Topics = []kmsg.ProduceResponseTopic{{Topic: "t", Partitions: []kmsg.ProduceResponseTopicPartition{{Partition: 0, ErrorCode: 6}}}}
	pr.Brokers = []kmsg.ProduceResponseBroker{{NodeID: 2, Host: host, Port: 9092}}
	sf := kmsg.NewPtrShareFetchResponse()
	sf.Version = 1
	sf.NodeEndpoints = []kmsg.ShareFetchResponseNodeEndpoint{{NodeID: 0, Host: host, Port: 1}}
	sa := kmsg.NewPtrShareAcknowledgeResponse()
	sa.Version = 1
	sa.NodeEndpoints = []kmsg.ShareAcknowledgeResponseNodeEndpoint{{NodeID: 0, Host: host, Port: 1}}
	av := kmsg.NewPtrApiVersionsResponse()
	av.Version = 3
	av.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 0, MaxVersion: 13}, {ApiKey: 1, MaxVersion: 18}, {ApiKey: 4000, MaxVersion: 1}}
	return map[int16][]kmsg.Response{
		3: {md}, 60: {dc}, 10: {fc3, fc4}, 0: {pr}, 78: {sf}, 79: {sa}, 18: {av},
	}
}

func fuzzNodes() *nodeTable {
	return newNodeTable("proxy.example", 30000, 0, 31, zerolog.Nop())
}

func FuzzRewriteResponse(f *testing.F) {
	for key, resps := range responseSeeds() {
		for _, r := range resps {
			f.Add(key, r.GetVersion(), kafkaframe.AppendResponse(nil, 9, r))
		}
	}
	t := fuzzNodes()
	f.Fuzz(func(tt *testing.T, key, version int16, frame []byte) {
		if len(frame) < 4 {
			return
		}
		binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
		var out []byte
		var err error
		if key == 18 {
			out, _, err = rewriteApiVersions(nil, nil, version, frame)
		} else {
			if _, ok := addressRewriters[key]; !ok {
				return
			}
			out, err = rewriteResponse(t, key, version, frame)
		}
		if err != nil || out == nil {
			return
		}
		if got := int(binary.BigEndian.Uint32(out)); got != len(out)-4 {
			tt.Fatalf("rewritten frame size %d for %d bytes", got, len(out)-4)
		}
		if _, err := kafkaframe.DecodeResponse(key, version, out[4:]); err != nil {
			tt.Fatalf("rewritten frame does not decode: %v", err)
		}
	})
}

// TestRewriteSeeds checks each seed is rewritten to proxy endpoints only and
// that out-of-range nodes vanish.
func TestRewriteSeeds(t *testing.T) {
	t.Parallel()
	nodes := fuzzNodes()
	for key, resps := range responseSeeds() {
		if key == 18 {
			continue
		}
		for _, r := range resps {
			frame := kafkaframe.AppendResponse(nil, 9, r)
			out, err := rewriteResponse(nodes, key, r.GetVersion(), frame)
			if err != nil || out == nil {
				t.Fatalf("%s v%d: %v %v", kmsg.NameForKey(key), r.GetVersion(), out, err)
			}
			if frameCorr(out) != 9 {
				t.Fatalf("correlation id lost")
			}
			resp, err := kafkaframe.DecodeResponse(key, r.GetVersion(), out[4:])
			if err != nil {
				t.Fatal(err)
			}
			for _, ep := range endpoints(resp) {
				if ep.host != "proxy.example" || ep.port != 30000+ep.node || ep.node > 31 {
					t.Errorf("%s v%d: endpoint %+v", kmsg.NameForKey(key), r.GetVersion(), ep)
				}
			}
		}
	}
	if a, ok := nodes.lookup(1); !ok || a != "upstream.example:9092" {
		t.Errorf("node 1 learned as %q", a)
	}
}

type endpoint struct {
	node int32
	host string
	port int32
}

func endpoints(r kmsg.Response) []endpoint {
	var out []endpoint
	switch r := r.(type) {
	case *kmsg.MetadataResponse:
		for _, b := range r.Brokers {
			out = append(out, endpoint{b.NodeID, b.Host, b.Port})
		}
	case *kmsg.DescribeClusterResponse:
		for _, b := range r.Brokers {
			out = append(out, endpoint{b.NodeID, b.Host, b.Port})
		}
	case *kmsg.FindCoordinatorResponse:
		if r.Version < 4 {
			out = append(out, endpoint{r.NodeID, r.Host, r.Port})
		}
		for _, c := range r.Coordinators {
			if c.ErrorCode == 0 {
				out = append(out, endpoint{c.NodeID, c.Host, c.Port})
			}
		}
	case *kmsg.ProduceResponse:
		for _, b := range r.Brokers {
			out = append(out, endpoint{b.NodeID, b.Host, b.Port})
		}
	case *kmsg.ShareFetchResponse:
		for _, b := range r.NodeEndpoints {
			out = append(out, endpoint{b.NodeID, b.Host, b.Port})
		}
	case *kmsg.ShareAcknowledgeResponse:
		for _, b := range r.NodeEndpoints {
			out = append(out, endpoint{b.NodeID, b.Host, b.Port})
		}
	}
	return out
}

// TestHostileLengthsAllocateLittle feeds responses whose array and string
// lengths claim far more than the frame holds: decoding must fail without
// allocating in proportion to the claims.
func TestHostileLengthsAllocateLittle(t *testing.T) {
	// Not parallel: it measures the process's heap, which other tests would grow.
	nodes := fuzzNodes()
	hostile := map[int16][]byte{
		3:  {0, 0, 0, 9, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff},             // Metadata v1: throttle... brokers count 2^31-1
		10: {0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x07}, // FindCoordinator v4: compact array of 2^32
		60: {0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff},
		0:  {0, 0, 0, 9, 0, 0xff, 0xff, 0xff, 0xff, 0x0f},
	}
	versions := map[int16]int16{3: 1, 10: 4, 60: 0, 0: 10}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < 100; i++ {
		for key, b := range hostile {
			frame := append([]byte{0, 0, 0, 0}, b...)
			binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
			if _, err := rewriteResponse(nodes, key, versions[key], frame); err == nil {
				t.Fatalf("%s: hostile response accepted", kmsg.NameForKey(key))
			}
		}
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Fatalf("hostile lengths allocated %d bytes", grew)
	}
}
