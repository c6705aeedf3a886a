package peer

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// linkGroup is the tests' instance group.
const linkGroup = "__streamshift_cluster_t"

// joinLinkGroup makes the instance group exist on c, as the instances'
// membership does (kfake asks a Heartbeat's ACL only of a group it has).
func joinLinkGroup(t *testing.T, c *kfake.Cluster, admin sasl.Mechanism) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.SASL(admin))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	jg := kmsg.NewPtrJoinGroupRequest()
	jg.Version = 3
	jg.Group, jg.ProtocolType = linkGroup, "streamshift"
	jg.SessionTimeoutMillis, jg.RebalanceTimeoutMillis = 60000, 60000
	jg.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "instances"}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := jg.RequestWith(ctx, cl)
	if err == nil && resp.ErrorCode == kerr.MemberIDRequired.Code {
		jg.MemberID = resp.MemberID
		resp, err = jg.RequestWith(ctx, cl)
	}
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		t.Fatalf("join %s: %v", linkGroup, err)
	}
}

// linkListener is an internal listener admitting links through c, whose
// serve calls are counted.
func linkListener(t *testing.T, c *kfake.Cluster, served *atomic.Int32) *Listener {
	t.Helper()
	dial := func(ctx context.Context) (net.Conn, error) {
		d := net.Dialer{Timeout: 5 * time.Second}
		return d.DialContext(ctx, "tcp", c.ListenAddrs()[0])
	}
	pl, err := Listen(ListenerOptions{Addr: "127.0.0.1:0", Auth: &Auth{Dial: dial, Group: linkGroup},
		Handlers: blocking(map[CallKind]blockingHandler{KindServe: func(_ context.Context, c *Call) ([]byte, int16) {
			served.Add(1)
			return echoData(c), 0
		}}),
		Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pl.Close() })
	return pl
}

// callThrough brings a link with m up and makes one serve call on it.
func callThrough(t *testing.T, pl *Listener, m sasl.Mechanism) {
	t.Helper()
	l := NewLink(LinkOptions{Self: "origin", Peer: "owner", Addr: pl.Addr().String(), SASL: m, Log: zerolog.Nop()})
	defer l.Close()
	waitFor(t, m.Name()+" link up", func() error {
		if !l.Up() {
			return errNotYet
		}
		return nil
	})
	data, err := l.Call(context.Background(), principalOf(KindServe), peerRequest(7), localhost(), time.Minute)
	if err != nil || binary.BigEndian.Uint32(data) != 7 {
		t.Fatalf("%s: serve call: %x %v", m.Name(), data, err)
	}
}

// TestPeerLinkSASL: with SASL upstream, a link is admitted only after its
// control-plane credentials pass the broker (relayed by the listener) and
// the principal may READ the instance group (kfake ACLs); until then no
// serve call runs. A dialer with wrong credentials, one whose principal
// may not READ the group, one without SASL, and a connection sending an
// envelope without authenticating are refused with
// CLUSTER_AUTHORIZATION_FAILED; SCRAM-SHA-256 and PLAIN instances pass.
func TestPeerLinkSASL(t *testing.T) {
	readGroup := kfake.ACL{Resource: kmsg.ACLResourceTypeGroup, Name: linkGroup, Pattern: kmsg.ACLResourcePatternTypeLiteral,
		Operation: kmsg.ACLOperationRead, Allow: true}
	anyGroup := kfake.ACL{Resource: kmsg.ACLResourceTypeGroup, Name: "app-", Pattern: kmsg.ACLResourcePatternTypePrefixed,
		Operation: kmsg.ACLOperationRead, Allow: true}
	admin := plain.Auth{User: "admin", Pass: "admin"}.AsMechanism()
	c := newCluster(t, kfake.NumBrokers(1), kfake.EnableSASL(), kfake.EnableACLs(), kfake.Superuser("PLAIN", "admin", "admin"),
		kfake.User("SCRAM-SHA-256", "instance", "instance-secret", readGroup),
		kfake.User("PLAIN", "instance-plain", "plain-secret", readGroup),
		kfake.User("SCRAM-SHA-512", "app", "app-secret", anyGroup))
	joinLinkGroup(t, c, admin)
	var served atomic.Int32
	pl := linkListener(t, c, &served)

	callThrough(t, pl, scram.Auth{User: "instance", Pass: "instance-secret"}.AsSha256Mechanism())
	callThrough(t, pl, plain.Auth{User: "instance-plain", Pass: "plain-secret"}.AsMechanism())

	for _, tc := range []struct {
		name string
		m    sasl.Mechanism
		want string
	}{
		{"wrong password", scram.Auth{User: "instance", Pass: "wrong"}.AsSha256Mechanism(), "SASL_AUTHENTICATION_FAILED"},
		{"no READ on the instance group", scram.Auth{User: "app", Pass: "app-secret"}.AsSha512Mechanism(), "may not READ group " + linkGroup},
		{"no SASL", nil, "this one has no control-plane.sasl-mechanism"},
	} {
		o := LinkOptions{Self: "origin", Peer: "owner", Addr: pl.Addr().String(), SASL: tc.m, Log: zerolog.Nop()}
		err := dialPeerOnce(o)
		if pe := notAdmitted(err); pe == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: link up: %v, want CLUSTER_AUTHORIZATION_FAILED saying %q", tc.name, err, tc.want)
		}
		// A link's calls say why while it is refused.
		l := NewLink(o)
		waitFor(t, tc.name+": calls refused", func() error {
			_, err := l.Call(context.Background(), principalOf(KindServe), peerRequest(8), localhost(), time.Minute)
			if ErrorCode(err) != kerr.ClusterAuthorizationFailed.Code {
				return fmt.Errorf("call: %v", err)
			}
			return nil
		})
		l.Close()
	}

	// A connection that sends an envelope without authenticating.
	conn, err := net.Dial("tcp", pl.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	p := principalOf(KindServe)
	r, err := kafkaframe.RoundTrip(conn, 1, nil, EnvelopeRequest(&p, peerRequest(9), localhost()), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if code := r.(*kmsg.EnvelopeResponse).ErrorCode; code != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("envelope before authenticating: %v, want CLUSTER_AUTHORIZATION_FAILED", kerr.ErrorForCode(code))
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("link after a refused envelope: %v, want it closed", err)
	}
	if n := served.Load(); n != 2 {
		t.Fatalf("%d serve calls ran, want the 2 of the admitted links", n)
	}
}

// TestPeerLinkSASLNoAuthorizer: without an authorizer on the upstream the
// READ probe passes, as Kafka's CLUSTER_ACTION check does: any principal
// the broker authenticates is admitted.
func TestPeerLinkSASLNoAuthorizer(t *testing.T) {
	c := newCluster(t, kfake.NumBrokers(1), kfake.EnableSASL(), kfake.Superuser("PLAIN", "admin", "admin"),
		kfake.User("SCRAM-SHA-512", "app", "app-secret"))
	joinLinkGroup(t, c, plain.Auth{User: "admin", Pass: "admin"}.AsMechanism())
	var served atomic.Int32
	pl := linkListener(t, c, &served)
	callThrough(t, pl, scram.Auth{User: "app", Pass: "app-secret"}.AsSha512Mechanism())
	if err := dialPeerOnce(LinkOptions{Self: "x", Addr: pl.Addr().String(), SASL: scram.Auth{User: "app", Pass: "wrong"}.AsSha512Mechanism()}); notAdmitted(err) == nil {
		t.Fatalf("wrong password without an authorizer: %v, want the link refused", err)
	}
}
