package proxy

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
	"github.com/streamshift/streamshift/internal/testpki"
	"github.com/streamshift/streamshift/proxy/peer"
)

// tlsPeerFiles is a listener certificate signed by its own CA, usable as
// a client certificate too (the links present it under mTLS).
func tlsPeerFiles(t *testing.T) *testpki.ServerFiles {
	return must(testpki.NewServerFiles(t.TempDir(), "streamshift", "127.0.0.1"))
}

// startTLSPeer starts an internal listener with the client listeners' TLS
// lt (PeerListenTLS) whose serve calls answer their correlation id.
func startTLSPeer(t *testing.T, lt *TLSListener) *peer.Listener {
	t.Helper()
	echo := func(_ context.Context, c *peer.Call) ([]byte, int16) {
		return binary.BigEndian.AppendUint32(nil, uint32(c.Corr)), 0
	}
	pl, err := peer.Listen(peer.ListenerOptions{
		Addr: "127.0.0.1:0", TLS: must(PeerListenTLS(lt, zerolog.Nop())),
		Handlers: map[peer.CallKind]peer.Handler{peer.KindServe: peer.BlockingHandler(echo)},
		Log:      zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pl.Close() })
	return pl
}

// linkTo starts a link to pl dialing with TLS dial (nil: plaintext).
func linkTo(t *testing.T, pl *peer.Listener, dial *tls.Config) *peer.Link {
	l := peer.NewLink(peer.LinkOptions{Self: "origin", Peer: "owner", Addr: pl.Addr().String(), TLS: dial, DialTimeout: time.Minute, Log: zerolog.Nop()})
	t.Cleanup(l.Close)
	return l
}

// callOver makes one serve call on a link once it is up.
func callOver(t *testing.T, l *peer.Link) {
	t.Helper()
	waitFor(t, "link up", func() error {
		if !l.Up() {
			return errNotYet
		}
		return nil
	})
	cid := "app"
	req := kafkaframe.AppendRequest(nil, 3, &cid, &kmsg.HeartbeatRequest{Version: 4, Group: "g", MemberID: "m"})[4:]
	p := peer.ConnPrincipal{Kind: peer.KindServe, Origin: "origin", Incarnation: 1, ConnID: 1}
	if data, err := l.Call(context.Background(), p, req, net.IPv4(127, 0, 0, 1), time.Hour); err != nil || binary.BigEndian.Uint32(data) != 3 {
		t.Fatalf("call over TLS: %x %v", data, err)
	}
}

// refusedWith waits until a link failed to come up, and returns why.
func refusedWith(t *testing.T, l *peer.Link) string {
	t.Helper()
	var why string
	waitFor(t, "the link's first failure", func() error {
		if why = l.Status().LastError; why == "" {
			return errNotYet
		}
		return nil
	})
	if l.Up() {
		t.Fatalf("the link came up after %q", why)
	}
	return why
}

func TestPeerLinkTLS(t *testing.T) {
	f := tlsPeerFiles(t)
	lt := &TLSListener{CertFile: f.CertFile, KeyFile: f.KeyFile}
	pl := startTLSPeer(t, lt)
	callOver(t, linkTo(t, pl, must(PeerDialTLS(lt, f.CAFile, zerolog.Nop()))))
	// A dialer that does not trust the listener's CA, or speaks plaintext.
	if why := refusedWith(t, linkTo(t, pl, &tls.Config{MinVersion: tls.VersionTLS12})); !strings.Contains(why, "certificate") {
		t.Fatalf("dialer without cluster.tls-ca-file: %v, want a certificate error", why)
	}
	refusedWith(t, linkTo(t, pl, nil))
}

func TestPeerLinkMutualTLS(t *testing.T) {
	f := tlsPeerFiles(t)
	// Every instance's listener certificate is signed by the cluster's CA,
	// which is also tls.client-ca-file.
	lt := &TLSListener{CertFile: f.CertFile, KeyFile: f.KeyFile, ClientCAFile: f.CAFile, ClientAuth: "require"}
	dial := must(PeerDialTLS(lt, f.CAFile, zerolog.Nop()))
	if dial.GetClientCertificate == nil {
		t.Fatal("tls.client-auth=require: the links present no certificate")
	}
	pl := startTLSPeer(t, lt)
	callOver(t, linkTo(t, pl, dial))
	noCert := must(PeerDialTLS(&TLSListener{CertFile: f.CertFile, KeyFile: f.KeyFile}, f.CAFile, zerolog.Nop()))
	refusedWith(t, linkTo(t, pl, noCert))
}

// TestPeerListenTLSBadFiles: the internal listener does not start on TLS
// files it cannot read, and says which key.
func TestPeerListenTLSBadFiles(t *testing.T) {
	_, err := PeerListenTLS(&TLSListener{CertFile: "/nonexistent.pem", KeyFile: "/nonexistent.key"}, zerolog.Nop())
	if err == nil || !strings.HasPrefix(err.Error(), "cluster.listen: ") || errors.Unwrap(err) == nil {
		t.Fatalf("PeerListenTLS of missing files: %v, want a cluster.listen error", err)
	}
}
