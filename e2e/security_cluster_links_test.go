//go:build e2e

package e2e_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/streamshift/streamshift/e2e/harness"
)

// checkClusterLinksSecure: three streamshift instances share a group log in
// front of the broker's SASL_PLAINTEXT listener, their control plane
// authenticated as "streamshift" (PLAIN). Their links authenticate with
// those credentials (each listener relays them to the broker and asks
// READ on the instance group) and come up; a streams member of "cli"
// joins through an instance that does not own its group and the owner
// has it. At an internal listener, an envelope without authenticating
// and "intruder" (no READ on the instance group) get
// CLUSTER_AUTHORIZATION_FAILED; a wrong password gets the broker's
// SASL_AUTHENTICATION_FAILED.
func checkClusterLinksSecure(ctx context.Context, r *harness.Run, upstream string, scram512 func(string) sasl.Mechanism) error {
	c, err := startSSClusterProbed(ctx, r.T, filepath.Join(r.Dir, "instances"), upstream, "", []kgo.Opt{kgo.SASL(scram512("cli"))},
		"STREAMSHIFT_CONTROL_PLANE_SASL_MECHANISM=PLAIN", "STREAMSHIFT_CONTROL_PLANE_SASL_USERNAME=streamshift",
		"STREAMSHIFT_CONTROL_PLANE_SASL_PASSWORD="+secureUsers["streamshift"])
	if err != nil {
		return err
	}
	if err := c.linksUp(ctx); err != nil {
		return err
	}

	// A group another instance owns, joined through s2.
	var group string
	owner := 1
	for i := 0; owner == 1; i++ {
		group = fmt.Sprintf("links-%d", i)
		if owner, err = c.owner(ctx, 1, group); err != nil {
			return err
		}
	}
	join := streamsJoin(group, "m1", []string{"e2e-input"}, group+"-store-changelog")
	resp, err := c.askAs(ctx, 1, scram512("cli"), join)
	if err != nil {
		return fmt.Errorf("join %s through s2: %w", group, err)
	}
	if hb := resp.(*kmsg.StreamsGroupHeartbeatResponse); hb.ErrorCode != 0 || hb.MemberEpoch < 1 {
		return fmt.Errorf("join %s through s2 (owner s%d): %v %s, epoch %d", group, owner+1, kerr.ErrorForCode(hb.ErrorCode), msgOf(hb.ErrorMessage), hb.MemberEpoch)
	}
	describe := kmsg.NewPtrStreamsGroupDescribeRequest()
	describe.Groups = []string{group}
	resp, err = c.askAs(ctx, owner, scram512("cli"), describe)
	if err != nil {
		return fmt.Errorf("describe %s at its owner s%d: %w", group, owner+1, err)
	}
	if g := resp.(*kmsg.StreamsGroupDescribeResponse).Groups; len(g) != 1 || len(g[0].Members) != 1 || g[0].Members[0].MemberID != "m1" {
		return fmt.Errorf("describe %s at its owner s%d: %+v, want member m1", group, owner+1, g)
	}

	internal := net.JoinHostPort(c.hosts[0], strconv.Itoa(c.port+3))
	instanceGroup := "__streamshift_cluster_e2e-instances"
	if code, msg, err := linkAuthenticate(ctx, internal, scram512("intruder")); err != nil || code != kerr.ClusterAuthorizationFailed.Code || !strings.Contains(msg, instanceGroup) {
		return fmt.Errorf("link as intruder: %v %q %v, want CLUSTER_AUTHORIZATION_FAILED naming %s", kerr.ErrorForCode(code), msg, err, instanceGroup)
	}
	wrong := scram.Auth{User: "streamshift", Pass: "wrong"}.AsSha512Mechanism()
	if code, msg, err := linkAuthenticate(ctx, internal, wrong); err != nil || code != kerr.SaslAuthenticationFailed.Code {
		return fmt.Errorf("link with a wrong password: %v %q %v, want the broker's SASL_AUTHENTICATION_FAILED", kerr.ErrorForCode(code), msg, err)
	}
	conn, err := net.DialTimeout("tcp", internal, 5*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	env := kmsg.NewPtrEnvelopeRequest()
	env.RequestData, env.RequestPrincipal, env.ClientHostAddress = []byte{0}, []byte{0}, []byte{127, 0, 0, 1}
	er, err := rawExchange(conn, 1, env)
	if err != nil {
		return fmt.Errorf("envelope without authenticating: %w", err)
	}
	if code := er.(*kmsg.EnvelopeResponse).ErrorCode; code != kerr.ClusterAuthorizationFailed.Code {
		return fmt.Errorf("envelope without authenticating: %v, want CLUSTER_AUTHORIZATION_FAILED", kerr.ErrorForCode(code))
	}
	return nil
}

// linksUp waits until every instance has its links to the two others up.
func (c *ssCluster) linksUp(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var last error
	for ctx.Err() == nil {
		last = nil
		for i := range c.hosts {
			v, err := c.view(ctx, i)
			if err != nil {
				last = err
				break
			}
			up := 0
			for _, l := range v.Links {
				if l.Up {
					up++
				}
			}
			if up != len(c.hosts)-1 {
				last = fmt.Errorf("s%d: links %v", i+1, v.Links)
				break
			}
		}
		if last == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("the instances' authenticated links did not come up: %v", last)
}

// askAs sends req to instance i's node port as the SASL user of m.
func (c *ssCluster) askAs(ctx context.Context, i int, m sasl.Mechanism, req kmsg.Request) (kmsg.Response, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(net.JoinHostPort(c.hosts[i], strconv.Itoa(c.port+1))), kgo.SASL(m))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	return cl.Broker(1).Request(ctx, req)
}

// linkAuthenticate authenticates with m at an internal listener as a link
// does, and returns the error code and message of the last
// SaslAuthenticate (0 when the link was admitted).
func linkAuthenticate(ctx context.Context, addr string, m sasl.Mechanism) (int16, string, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, m.Name()
	r, err := rawExchange(conn, 1, hs)
	if err != nil {
		return 0, "", fmt.Errorf("SaslHandshake: %w", err)
	}
	if code := r.(*kmsg.SASLHandshakeResponse).ErrorCode; code != 0 {
		return code, "", nil
	}
	host, _, _ := net.SplitHostPort(addr)
	session, token, err := m.Authenticate(ctx, host)
	if err != nil {
		return 0, "", err
	}
	for corr := int32(2); ; corr++ {
		a := kmsg.NewPtrSASLAuthenticateRequest()
		a.Version, a.SASLAuthBytes = 1, token
		r, err := rawExchange(conn, corr, a)
		if err != nil {
			return 0, "", fmt.Errorf("SaslAuthenticate: %w", err)
		}
		ar := r.(*kmsg.SASLAuthenticateResponse)
		if ar.ErrorCode != 0 {
			return ar.ErrorCode, msgOf(ar.ErrorMessage), nil
		}
		done, next, err := session.Challenge(ar.SASLAuthBytes)
		if err != nil || done {
			return 0, "", err
		}
		token = next
	}
}

// rawExchange writes req with correlation id corr on conn and reads its
// answer (response header v0, or v1 for a flexible answer).
func rawExchange(conn net.Conn, corr int32, req kmsg.Request) (kmsg.Response, error) {
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("e2e"))
	if _, err := conn.Write(f.AppendRequest(nil, req, corr)); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(conn, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n < 4 || n > 1<<20 {
		return nil, fmt.Errorf("answer of %d bytes", n)
	}
	msg := make([]byte, n)
	if _, err := io.ReadFull(conn, msg); err != nil {
		return nil, err
	}
	if got := int32(binary.BigEndian.Uint32(msg)); got != corr {
		return nil, fmt.Errorf("answer of correlation id %d, want %d", got, corr)
	}
	body := msg[4:]
	resp := req.ResponseKind()
	if resp.IsFlexible() && req.Key() != int16(kmsg.ApiVersions) {
		if len(body) == 0 || body[0] != 0 {
			return nil, errors.New("response header with tags")
		}
		body = body[1:]
	}
	return resp, resp.ReadFrom(body)
}
