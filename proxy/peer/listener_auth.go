package peer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// Links authenticate as the listeners' clients do, with no new secret
// (docs/one-address.md §3): when the upstream wants SASL, a dialing
// instance authenticates on the link with its control-plane credentials,
// and the internal listener relays them to the broker on an upstream
// connection of the link's own. On that connection it then asks whether
// the principal may READ the instance group, which only the instances
// may: Kafka checks CLUSTER_ACTION on an envelope's sender the same way.
// Until both pass, the link carries no call.

// Auth is the internal listener's admission of links.
type Auth struct {
	// Dial opens an upstream connection for one link's authentication.
	Dial func(ctx context.Context) (net.Conn, error)
	// Group is the instance group (__streamshift_cluster_<cluster-id>):
	// a principal that may not READ it is not an instance.
	Group string
	// Timeout bounds a link's authentication, from its TLS handshake to
	// its admission (default 10s).
	Timeout time.Duration
}

// mechanisms are the SASL mechanisms of links: the control plane's.
var mechanisms = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}

// saslRounds is how many SaslAuthenticate exchanges complete a mechanism:
// PLAIN's one message, SCRAM's client-first and client-final. The last is
// when the listener asks its authorization question.
func saslRounds(mechanism string) int {
	if mechanism == "PLAIN" {
		return 1
	}
	return 2
}

// linkProbeMemberID is the member id of the link's READ probe.
const linkProbeMemberID = "streamshift-link-authorization-probe"

// GroupReadProbe is the request that asks the broker whether the
// connection's principal may READ group: a Heartbeat of a member no group
// has. Kafka answers GROUP_AUTHORIZATION_FAILED before it looks at the
// group, and any other answer changes nothing.
func GroupReadProbe(group, memberID string, version int16) *kmsg.HeartbeatRequest {
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version = version
	hb.Group, hb.Generation, hb.MemberID = group, -1, memberID
	return hb
}

// linkAuth is an inbound link's authentication until it is admitted.
type linkAuth struct {
	o        *Auth
	deadline time.Time
	// up is the link's upstream connection, from the SaslHandshake on.
	up        net.Conn
	upMax     map[int16]int16 // the broker's max version by key
	corr      int32
	mechanism string
	rounds    int
}

// linkRefused is why a link was not admitted: logged as a warning.
type linkRefused struct{ reason string }

func (e *linkRefused) Error() string { return "link not admitted: " + e.reason }

func (a *linkAuth) close() {
	if a.up != nil {
		_ = a.up.Close()
		a.up = nil
	}
}

// ask sends req to the broker on the link's upstream connection.
func (a *linkAuth) ask(req kmsg.Request, maxFrame int) (kmsg.Response, error) {
	a.corr++
	return kafkaframe.RoundTrip(a.up, a.corr, nil, req, maxFrame)
}

// upVersion is the version of key to send the broker: its highest, at
// most want; -1 if it has none.
func (a *linkAuth) upVersion(key kmsg.Key, want int16) int16 {
	v, ok := a.upMax[int16(key)]
	if !ok {
		return -1
	}
	return min(v, want)
}

// saslHandshake opens the link's upstream connection and relays the
// dialer's mechanism to the broker.
func (pc *inbound) saslHandshake(h kafkaframe.Header, msg []byte) error {
	a := pc.auth
	if h.Version != 1 {
		return fmt.Errorf("SaslHandshake v%d: links use v1", h.Version)
	}
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.Version = h.Version
	if err := req.ReadFrom(msg[h.BodyAt:]); err != nil {
		return fmt.Errorf("decode SaslHandshake v1: %w", err)
	}
	resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
	refuse := func(code int16, reason string) error {
		resp.ErrorCode = code
		if err := pc.answer(h.Corr, resp); err != nil {
			return err
		}
		return &linkRefused{reason}
	}
	switch {
	case a.up != nil:
		return refuse(kerr.IllegalSaslState.Code, "a second SaslHandshake")
	case !slices.Contains(mechanisms, req.Mechanism):
		resp.SupportedMechanisms = mechanisms
		return refuse(kerr.UnsupportedSaslMechanism.Code, fmt.Sprintf("SASL mechanism %q: links use the control plane's, %v", req.Mechanism, mechanisms))
	}
	if err := a.open(pc.pl.o.MaxFrameBytes); err != nil {
		// Not the dialer's fault: it retries after its backoff.
		resp.ErrorCode = kerr.NetworkException.Code
		_ = pc.answer(h.Corr, resp)
		return fmt.Errorf("authenticating a link: %w", err)
	}
	fwd := kmsg.NewPtrSASLHandshakeRequest()
	fwd.Version, fwd.Mechanism = 1, req.Mechanism
	r, err := a.ask(fwd, pc.pl.o.MaxFrameBytes)
	if err != nil {
		resp.ErrorCode = kerr.NetworkException.Code
		_ = pc.answer(h.Corr, resp)
		return fmt.Errorf("authenticating a link: SaslHandshake to the upstream: %w", err)
	}
	up := r.(*kmsg.SASLHandshakeResponse)
	resp.SupportedMechanisms = up.SupportedMechanisms
	if up.ErrorCode != 0 {
		return refuse(up.ErrorCode, fmt.Sprintf("the upstream answered SaslHandshake %s with %s (enabled: %v)", req.Mechanism, kerr.ErrorForCode(up.ErrorCode), up.SupportedMechanisms))
	}
	a.mechanism = req.Mechanism
	return pc.answer(h.Corr, resp)
}

// open dials the link's upstream connection and learns its versions.
func (a *linkAuth) open(maxFrame int) error {
	ctx, cancel := context.WithDeadline(context.Background(), a.deadline)
	defer cancel()
	up, err := a.o.Dial(ctx)
	if err != nil {
		return err
	}
	_ = up.SetDeadline(a.deadline)
	a.up = up
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	av.ClientSoftwareName, av.ClientSoftwareVersion = "streamshift", "link-authentication"
	r, err := a.ask(av, maxFrame)
	if err != nil {
		return fmt.Errorf("ApiVersions to the upstream: %w", err)
	}
	resp := r.(*kmsg.ApiVersionsResponse)
	if resp.ErrorCode != 0 {
		return fmt.Errorf("ApiVersions to the upstream: %w", kerr.ErrorForCode(resp.ErrorCode))
	}
	a.upMax = make(map[int16]int16, len(resp.ApiKeys))
	for _, k := range resp.ApiKeys {
		a.upMax[k.ApiKey] = k.MaxVersion
	}
	if a.upVersion(kmsg.SASLHandshake, 1) < 1 || a.upVersion(kmsg.SASLAuthenticate, 2) < 0 || a.upVersion(kmsg.Heartbeat, 4) < 0 {
		return errors.New("the upstream has no SaslHandshake v1, SaslAuthenticate or Heartbeat")
	}
	return nil
}

// saslAuthenticate relays one SASL message to the broker and its answer
// back. After the mechanism's last one, the principal must also pass the
// READ probe on the instance group, or the answer becomes
// CLUSTER_AUTHORIZATION_FAILED; then the link is admitted.
func (pc *inbound) saslAuthenticate(h kafkaframe.Header, msg []byte) error {
	a := pc.auth
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.Version = h.Version
	if h.Version < 0 || h.Version > 2 {
		return fmt.Errorf("SaslAuthenticate v%d: links use v0 to v2", h.Version)
	}
	if err := req.ReadFrom(msg[h.BodyAt:]); err != nil {
		return fmt.Errorf("decode SaslAuthenticate v%d: %w", h.Version, err)
	}
	resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	refuse := func(code int16, reason string) error {
		resp.ErrorCode, resp.ErrorMessage, resp.SASLAuthBytes = code, &reason, nil
		if err := pc.answer(h.Corr, resp); err != nil {
			return err
		}
		return &linkRefused{reason}
	}
	if a.mechanism == "" {
		return refuse(kerr.IllegalSaslState.Code, "SaslAuthenticate before a SaslHandshake")
	}
	fwd := kmsg.NewPtrSASLAuthenticateRequest()
	fwd.Version, fwd.SASLAuthBytes = a.upVersion(kmsg.SASLAuthenticate, h.Version), req.SASLAuthBytes
	r, err := a.ask(fwd, pc.pl.o.MaxFrameBytes)
	if err != nil {
		// Brokers answer SASL_AUTHENTICATION_FAILED and close; some
		// close at once.
		return refuse(kerr.SaslAuthenticationFailed.Code, fmt.Sprintf("the upstream closed the connection during %s authentication (%v): credentials refused?", a.mechanism, err))
	}
	up := r.(*kmsg.SASLAuthenticateResponse)
	if up.ErrorCode != 0 {
		return refuse(up.ErrorCode, fmt.Sprintf("the upstream refused the %s credentials: %s: %s", a.mechanism, kerr.ErrorForCode(up.ErrorCode), deref(up.ErrorMessage)))
	}
	resp.SASLAuthBytes, resp.SessionLifetimeMillis = up.SASLAuthBytes, up.SessionLifetimeMillis
	if a.rounds++; a.rounds < saslRounds(a.mechanism) {
		return pc.answer(h.Corr, resp)
	}
	hb := GroupReadProbe(a.o.Group, linkProbeMemberID, a.upVersion(kmsg.Heartbeat, 4))
	r, err = a.ask(hb, pc.pl.o.MaxFrameBytes)
	if err != nil {
		resp.ErrorCode, resp.SASLAuthBytes = kerr.NetworkException.Code, nil
		reason := fmt.Sprintf("asking the upstream whether the principal may READ group %s: %v", a.o.Group, err)
		resp.ErrorMessage = &reason
		_ = pc.answer(h.Corr, resp)
		return errors.New(reason)
	}
	if r.(*kmsg.HeartbeatResponse).ErrorCode == kerr.GroupAuthorizationFailed.Code {
		return refuse(kerr.ClusterAuthorizationFailed.Code, fmt.Sprintf("the principal may not READ group %s, so it is not a streamshift instance of this cluster (the instances' control-plane principal needs READ on it)", a.o.Group))
	}
	a.close()
	pc.auth = nil
	_ = pc.conn.SetReadDeadline(time.Time{})
	pc.log.Debug().Str("mechanism", a.mechanism).Msg("cluster: link authenticated and admitted")
	return pc.answer(h.Corr, resp)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
