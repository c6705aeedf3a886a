package proxy

import (
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/internal/testpki"
)

// benchTLS is BenchmarkForwardProduce's TLS setup: an echo broker behind
// TLS, the proxy with TLS on both sides, and a dialer of TLS client
// connections that trust both.
func benchTLS(b *testing.B) (serve func(*fakeBroker, net.Conn), tweak func(*Options), dial func(string) *rawConn) {
	pf := must(testpki.NewServerFiles(b.TempDir(), "bench", "127.0.0.1"))
	cert := must(tls.LoadX509KeyPair(pf.CertFile, pf.KeyFile))
	server := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	client := &tls.Config{RootCAs: pf.CA.Pool(), MinVersion: tls.VersionTLS12}
	serve = func(fb *fakeBroker, c net.Conn) { serveEcho(fb, tls.Server(c, server)) }
	tweak = func(o *Options) {
		o.TLS = &TLSListener{CertFile: pf.CertFile, KeyFile: pf.KeyFile}
		o.UpstreamTLS = client
		o.ControlPlane = []kgo.Opt{kgo.DialTLSConfig(client)}
	}
	dial = func(addr string) *rawConn {
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, client)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		_ = c.SetDeadline(time.Now().Add(60 * time.Second))
		return &rawConn{b, c}
	}
	return serve, tweak, dial
}
