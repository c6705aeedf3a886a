package peer

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// authenticate brings a link through the peer's admission (listener_auth.go):
// SaslHandshake v1 and SaslAuthenticate with the control plane's
// credentials, which the peer relays to the broker and follows with its
// READ probe on the instance group. wantsSASL is whether the peer's
// ApiVersions listed SaslHandshake. A refusal is an Error of code
// CLUSTER_AUTHORIZATION_FAILED (notAdmitted).
func (l *Link) authenticate(ctx context.Context, conn net.Conn, wantsSASL bool) error {
	m := l.o.SASL
	switch {
	case m == nil && !wantsSASL:
		return nil
	case m == nil:
		return l.notAdmitted("that instance authenticates its links (its control-plane.sasl-mechanism is set) and this one has no control-plane.sasl-mechanism: every instance needs the same")
	case !wantsSASL:
		return l.notAdmitted(fmt.Sprintf("this instance authenticates its links (control-plane.sasl-mechanism %s) and that instance takes no SASL on its internal listener (no control-plane.sasl-mechanism): every instance needs the same", m.Name()))
	}
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, m.Name()
	r, err := kafkaframe.RoundTrip(conn, 1, &l.o.Self, hs, l.o.MaxFrameBytes)
	if err != nil {
		return fmt.Errorf("SaslHandshake with %s: %w", l.o.Addr, err)
	}
	switch hr := r.(*kmsg.SASLHandshakeResponse); hr.ErrorCode {
	case 0:
	case kerr.NetworkException.Code:
		return fmt.Errorf("SaslHandshake with %s: %w: that instance could not reach the upstream to authenticate the link", l.o.Addr, kerr.NetworkException)
	default:
		return l.notAdmitted(fmt.Sprintf("SaslHandshake %s: %s (mechanisms: %v)", m.Name(), kerr.ErrorForCode(hr.ErrorCode), hr.SupportedMechanisms))
	}
	host, _, _ := net.SplitHostPort(l.o.Addr)
	session, token, err := m.Authenticate(ctx, host)
	if err != nil {
		return fmt.Errorf("SASL %s: %w", m.Name(), err)
	}
	for corr := int32(2); ; corr++ {
		a := kmsg.NewPtrSASLAuthenticateRequest()
		a.Version, a.SASLAuthBytes = 1, token
		r, err := kafkaframe.RoundTrip(conn, corr, &l.o.Self, a, l.o.MaxFrameBytes)
		if err != nil {
			return fmt.Errorf("SaslAuthenticate with %s: %w", l.o.Addr, err)
		}
		ar := r.(*kmsg.SASLAuthenticateResponse)
		if ar.ErrorCode == kerr.NetworkException.Code {
			return fmt.Errorf("SaslAuthenticate with %s: %w: %s", l.o.Addr, kerr.NetworkException, deref(ar.ErrorMessage))
		}
		if ar.ErrorCode != 0 {
			return l.notAdmitted(fmt.Sprintf("SaslAuthenticate %s: %s: %s", m.Name(), kerr.ErrorForCode(ar.ErrorCode), deref(ar.ErrorMessage)))
		}
		done, next, err := session.Challenge(ar.SASLAuthBytes)
		if err != nil {
			return fmt.Errorf("SASL %s with %s: %w", m.Name(), l.o.Addr, err)
		}
		if done {
			return nil
		}
		token = next
	}
}

// notAdmitted is a refusal of the link by the peer: the credentials or the
// ACLs must change, so the link retries slowly.
func (l *Link) notAdmitted(reason string) error {
	return &Error{Peer: l.o.Peer, Code: kerr.ClusterAuthorizationFailed.Code, Reason: "link not admitted: " + reason}
}

// notAdmitted is err's refusal, nil if err is another failure.
func notAdmitted(err error) *Error {
	var pe *Error
	if errors.As(err, &pe) && pe.Code == kerr.ClusterAuthorizationFailed.Code {
		return pe
	}
	return nil
}

// setRefused records why the link is down: calls fail with it meanwhile.
func (l *Link) setRefused(pe *Error) {
	l.mu.Lock()
	l.refused = pe
	l.mu.Unlock()
}
