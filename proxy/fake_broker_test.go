package proxy

import (
	"encoding/binary"
	"io"
	"net"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// fakeBroker is a loopback upstream for tests of the forward path: serve
// runs for each accepted connection (the proxy's control plane and every
// proxied client connection).
type fakeBroker struct {
	ln   net.Listener
	host string
	port int32
}

func startFakeBroker(tb testing.TB, serve func(b *fakeBroker, c net.Conn)) *fakeBroker {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	a := ln.Addr().(*net.TCPAddr)
	b := &fakeBroker{ln: ln, host: a.IP.String(), port: int32(a.Port)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(b, c)
			}()
		}
	}()
	return b
}

func (b *fakeBroker) addr() string { return b.ln.Addr().String() }

// readRequest reads one request frame into buf (grown as needed) and parses
// its header; msg is the frame without its size.
func readRequest(r io.Reader, buf []byte) (h kafkaframe.Header, msg []byte, err error) {
	var size [4]byte
	if _, err = io.ReadFull(r, size[:]); err != nil {
		return h, buf, err
	}
	n := int(binary.BigEndian.Uint32(size[:]))
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	msg = buf[:n]
	if _, err = io.ReadFull(r, msg); err != nil {
		return h, msg, err
	}
	h, err = kafkaframe.ParseRequestHeader(msg)
	return h, msg, err
}

// controlPlaneAnswer is a fake broker's answer to the proxy's own
// ApiVersions and Metadata requests, as the one node b; nil for other keys.
func (b *fakeBroker) controlPlaneAnswer(h kafkaframe.Header) []byte {
	var resp kmsg.Response
	switch kmsg.Key(h.Key) {
	case kmsg.ApiVersions:
		av := kmsg.NewPtrApiVersionsResponse()
		for _, k := range []kmsg.Key{kmsg.Produce, kmsg.Fetch, kmsg.Metadata, kmsg.ApiVersions} {
			av.ApiKeys = append(av.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: int16(k), MaxVersion: kmsg.RequestForKey(int16(k)).MaxVersion()})
		}
		resp = av
	case kmsg.Metadata:
		m := kmsg.NewPtrMetadataResponse()
		m.Brokers = []kmsg.MetadataResponseBroker{{NodeID: 0, Host: b.host, Port: b.port}}
		resp = m
	default:
		return nil
	}
	resp.SetVersion(h.Version)
	return kafkaframe.AppendResponse(nil, h.Corr, resp)
}
