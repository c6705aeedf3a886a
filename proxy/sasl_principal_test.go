package proxy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// principalEcho answers StreamsGroupHeartbeat with the principal the proxy
// knows for the connection, in the error message.
type principalEcho struct{}

func (principalEcho) Intercept(req *Request, out Outcome) {
	resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
	p := req.Client.Principal
	resp.ErrorMessage = &p
	out.Respond(resp)
}

// principalThrough is the principal the proxy p knows for a connection of
// a client with opts.
func principalThrough(t *testing.T, p *testProxy, opts ...kgo.Opt) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var w addrWatch
	cl := newClient(t, p, &w, opts...)
	if err := cl.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	resp, err := kmsg.NewPtrStreamsGroupHeartbeatRequest().RequestWith(ctx, cl.Broker(0))
	if err != nil {
		t.Fatal(err)
	}
	return deref(resp.ErrorMessage)
}

// TestPrincipalFromSASL: the proxy, which passes SASL through, knows the
// principal the broker authenticated a connection as after a PLAIN or
// SCRAM exchange the broker accepted (User:<name>, under Kafka's default
// principal builder), so answers of the broker about it can be shared.
func TestPrincipalFromSASL(t *testing.T) {
	t.Parallel()
	c := newCluster(t, kfake.EnableSASL(), kfake.Superuser("PLAIN", "admin", "admin"),
		kfake.User("PLAIN", "alice", "alice-pw"), kfake.User("SCRAM-SHA-256", "bob,1", "bob-pw"),
		kfake.User("SCRAM-SHA-512", "carol", "carol-pw"))
	p := startProxy(t, c.ListenAddrs(), func(o *Options) {
		o.ControlPlane = []kgo.Opt{kgo.SASL(plain.Auth{User: "admin", Pass: "admin"}.AsMechanism())}
	})
	if err := p.Register(int16(kmsg.StreamsGroupHeartbeat), 0, 1, true, principalEcho{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		m    sasl.Mechanism
		want string
	}{
		{plain.Auth{User: "alice", Pass: "alice-pw"}.AsMechanism(), "User:alice"},
		{scram.Auth{User: "bob,1", Pass: "bob-pw"}.AsSha256Mechanism(), "User:bob,1"},
		{scram.Auth{User: "carol", Pass: "carol-pw"}.AsSha512Mechanism(), "User:carol"},
	} {
		if got := principalThrough(t, p, kgo.SASL(tc.m)); got != tc.want {
			t.Errorf("%s: the proxy knows principal %q, want %q", tc.m.Name(), got, tc.want)
		}
	}
}

// TestPrincipalWithoutSASL: a connection that never authenticates with
// SASL has the principal of the upstream transport, one for all of them.
func TestPrincipalWithoutSASL(t *testing.T) {
	t.Parallel()
	p := startProxy(t, newCluster(t).ListenAddrs(), nil)
	if err := p.Register(int16(kmsg.StreamsGroupHeartbeat), 0, 1, true, principalEcho{}); err != nil {
		t.Fatal(err)
	}
	if got := principalThrough(t, p); got != TransportPrincipal {
		t.Errorf("a connection without SASL: principal %q, want %q", got, TransportPrincipal)
	}
}

// TestSaslUsers: the user read from a mechanism's first message, and none
// where the broker's principal would not be User:<it>.
func TestSaslUsers(t *testing.T) {
	for _, tc := range []struct {
		mechanism, msg, want string
	}{
		{"PLAIN", "\x00alice\x00pw", "alice"},
		{"PLAIN", "alice\x00alice\x00pw", "alice"},
		{"PLAIN", "bob\x00alice\x00pw", ""}, // another authorization id: Kafka refuses it
		{"PLAIN", "alice", ""},
		{"PLAIN", "\x00\x00pw", ""},
		{"SCRAM", "n,,n=alice,r=abc", "alice"},
		{"SCRAM", "y,,n=a=2Cb=3Dc,r=abc", "a,b=c"},
		{"SCRAM", "n,a=alice,n=alice,r=abc", "alice"},
		{"SCRAM", "n,a=bob,n=alice,r=abc", ""},
		{"SCRAM", "n,,n=tokenid,r=abc,tokenauth=true", ""}, // a delegation token: its owner is the principal
		{"SCRAM", "n,,n=a=XYb,r=abc", ""},
		{"SCRAM", "p=tls-unique,,n=alice,r=abc", ""},
		{"SCRAM", "n,,r=abc", ""},
		{"SCRAM", "garbage", ""},
	} {
		got := scramUser([]byte(tc.msg))
		if tc.mechanism == "PLAIN" {
			got = plainUser([]byte(tc.msg))
		}
		if got != tc.want {
			t.Errorf("%s %q: user %q, want %q", tc.mechanism, tc.msg, got, tc.want)
		}
	}
}

// FuzzSaslUser: a client's first SASL message, whatever its bytes, gives a
// user or none, never a panic; a user never holds the PLAIN password.
func FuzzSaslUser(f *testing.F) {
	for _, s := range []string{"\x00alice\x00pw", "n,,n=alice,r=abc", "y,a=b=2C,n=b=2C,r=x,tokenauth=true", "=", ","} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if u := plainUser(b); u != "" && strings.Contains(u, "\x00") {
			t.Fatalf("PLAIN user %q holds a NUL", u)
		}
		_ = scramUser(b)
	})
}
