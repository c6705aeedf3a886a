package proxy

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/streamshift/streamshift/internal/testwait"
)

// testProxy is a proxy running in front of a kfake cluster.
type testProxy struct {
	*Proxy
	addr string
	stop func()
}

// startProxy starts a proxy in front of upstream on random free ports.
func startProxy(t testing.TB, upstream []string, tweak func(*Options)) *testProxy {
	t.Helper()
	for attempt := 0; attempt < 20; attempt++ {
		// Below Linux's ephemeral range (32768-60999), where the kernel
		// puts kfake's listeners and every outgoing connection: a base
		// there could meet a port another parallel test is using.
		base := 10000 + rand.IntN(22000)
		opts := Options{
			Upstream:        upstream,
			Listen:          "127.0.0.1:" + strconv.Itoa(base),
			NodeIDMin:       0,
			NodeIDMax:       7,
			EventLoops:      2,
			DialTimeout:     2 * time.Second,
			ShutdownTimeout: 5 * time.Second,
			Log:             zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel),
		}
		if tweak != nil {
			tweak(&opts)
		}
		p, err := New(opts)
		if err != nil {
			t.Fatalf("new proxy: %v", err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		errCh := make(chan error, 1)
		go func() { errCh <- p.Run(ctx) }()
		deadline := time.Now().Add(10 * time.Second)
		for !p.Serving() && time.Now().Before(deadline) {
			select {
			case err := <-errCh:
				cancel()
				if err != nil && strings.Contains(err.Error(), "start listeners") {
					t.Logf("retrying on other ports: %v", err)
					goto retry
				}
				t.Fatalf("proxy run: %v", err)
			case <-time.After(5 * time.Millisecond):
			}
		}
		if !p.Serving() {
			cancel()
			t.Fatal("proxy not listening")
		}
		{
			var once sync.Once
			tp := &testProxy{Proxy: p, addr: opts.Listen}
			tp.stop = func() {
				once.Do(func() {
					cancel()
					select {
					case err := <-errCh:
						if err != nil {
							t.Errorf("proxy run: %v", err)
						}
					case <-time.After(30 * time.Second):
						t.Error("proxy did not stop")
					}
				})
			}
			t.Cleanup(tp.stop)
			return tp
		}
	retry:
	}
	t.Fatal("no free ports for the proxy")
	return nil
}

// newCluster starts a kfake cluster of 3 brokers.
func newCluster(t testing.TB, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(3)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// addrWatch records every broker endpoint a kgo client connects to.
type addrWatch struct {
	mu    sync.Mutex
	addrs map[string]bool
}

func (w *addrWatch) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, _ error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.addrs == nil {
		w.addrs = make(map[string]bool)
	}
	w.addrs[net.JoinHostPort(meta.Host, strconv.Itoa(int(meta.Port)))] = true
}

// assertOnlyProxy fails if the client connected anywhere but the proxy.
func (w *addrWatch) assertOnlyProxy(t testing.TB, p *testProxy, upstream []string) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.addrs) == 0 {
		t.Fatal("client connected nowhere")
	}
	ok := map[string]bool{p.addr: true}
	for id := p.opts.NodeIDMin; id <= p.opts.NodeIDMax; id++ {
		ok[p.NodeAddr(id)] = true
	}
	for a := range w.addrs {
		if !ok[a] {
			t.Errorf("client connected to %s, not a proxy address (upstream %v)", a, upstream)
		}
	}
}

func newClient(t testing.TB, p *testProxy, w *addrWatch, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	all := []kgo.Opt{kgo.SeedBrokers(p.addr), kgo.WithHooks(w), kgo.RetryTimeout(20 * time.Second)}
	cl, err := kgo.NewClient(append(all, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// waitFor polls fn until it returns nil (internal/testwait).
func waitFor(t testing.TB, what string, fn func() error) {
	t.Helper()
	testwait.For(t, what, fn)
}

var errNotYet = testwait.ErrNotYet

func fmtErr(format string, args ...any) error { return fmt.Errorf(format, args...) }
