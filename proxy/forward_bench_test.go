package proxy

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// serveEcho answers just enough for the proxy's forward path: ApiVersions
// and Metadata (the proxy's control-plane client) and Produce (acknowledged
// at once, records ignored). It costs the same whether a request comes
// directly or through the proxy, so timing the two routes in one run
// isolates what the proxy adds.
func serveEcho(b *fakeBroker, c net.Conn) {
	r := bufio.NewReaderSize(c, 1<<20)
	var msg, out []byte
	for {
		h, m, err := readRequest(r, msg)
		if err != nil {
			return
		}
		msg = m
		if kmsg.Key(h.Key) == kmsg.Produce {
			p := kmsg.NewPtrProduceResponse()
			p.Topics = []kmsg.ProduceResponseTopic{{Topic: "t", Partitions: []kmsg.ProduceResponseTopicPartition{{Partition: 0}}}}
			p.SetVersion(h.Version)
			out = kafkaframe.AppendResponse(out[:0], h.Corr, p)
		} else if out = b.controlPlaneAnswer(h); out == nil {
			return
		}
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

// BenchmarkForwardProduce times one acks=1 Produce round trip of a given
// size directly to the echo broker and through the proxy, alternating
// request by request, and reports proxy/direct (the time ratio of the
// round trips) next to ns/op (both routes). Profile the proxy's forward
// path with:
//
//	go test -run '^$' -bench ForwardProduce -cpuprofile cpu.out ./proxy/
//
// The TLS cases speak TLS on every hop (client → broker directly, client →
// proxy → broker): proxy/direct is then what the proxy adds with TLS on
// both sides.
func BenchmarkForwardProduce(b *testing.B) {
	for _, secure := range []bool{false, true} {
		for _, size := range []int{1 << 10, 64 << 10, 1 << 20, 4 << 20} {
			name := strconv.Itoa(size>>10) + "KiB"
			if secure {
				name = "TLS/" + name
			}
			b.Run(name, func(b *testing.B) { benchForwardProduce(b, size, secure) })
		}
	}
}

func benchForwardProduce(b *testing.B, size int, secure bool) {
	serve, tweak, dial := serveEcho, func(*Options) {}, func(addr string) *rawConn { return dialRaw(b, addr) }
	if secure {
		serve, tweak, dial = benchTLS(b)
	}
	up := startFakeBroker(b, serve)
	p := startProxy(b, []string{up.addr()}, func(o *Options) {
		o.Log = zerolog.Nop()
		tweak(o)
	})
	frame := benchProduceFrame(size)
	direct := dial(up.addr())
	proxied := dial(p.addr)
	buf := make([]byte, 0, 256)
	roundTrip := func(c *rawConn, corr int32) time.Duration {
		start := time.Now()
		buf = rawRoundTrip(b, c, frame, buf, corr)
		return time.Since(start)
	}
	for i := 0; i < 20; i++ { // connections dialled, buffers grown
		roundTrip(direct, int32(i))
		roundTrip(proxied, int32(i))
	}
	var dt, pt time.Duration
	b.SetBytes(int64(2 * len(frame)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dt += roundTrip(direct, int32(i))
		pt += roundTrip(proxied, int32(i))
	}
	b.ReportMetric(float64(pt)/float64(dt), "proxy/direct")
	b.ReportMetric(float64(pt-dt)/float64(b.N)/1e3, "µs-added/op")
}

// benchProduceFrame is the frame of a Produce v11 (acks 1) of size bytes of
// records to one partition, as the forwarding benchmarks send it.
func benchProduceFrame(size int) []byte {
	req := kmsg.NewPtrProduceRequest()
	req.Version = 11
	req.Acks = 1
	req.TimeoutMillis = 5000
	req.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: make([]byte, size)}}}}
	id := "bench"
	return kafkaframe.AppendRequest(nil, 0, &id, req)
}

// rawRoundTrip writes frame on c with correlation id corr and reads the
// answer into buf (returned, grown as needed), checking its correlation id.
func rawRoundTrip(b testing.TB, c *rawConn, frame, buf []byte, corr int32) []byte {
	binary.BigEndian.PutUint32(frame[8:], uint32(corr))
	if _, err := c.Write(frame); err != nil {
		b.Fatal(err)
	}
	var sz [4]byte
	if _, err := io.ReadFull(c, sz[:]); err != nil {
		b.Fatal(err)
	}
	buf = slices.Grow(buf[:0], int(binary.BigEndian.Uint32(sz[:])))[:binary.BigEndian.Uint32(sz[:])]
	if _, err := io.ReadFull(c, buf); err != nil {
		b.Fatal(err)
	}
	if got := int32(binary.BigEndian.Uint32(buf)); got != corr {
		b.Fatalf("correlation id %d, want %d", got, corr)
	}
	return buf
}
