package proxy

import (
	"bytes"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// streamshift never terminates SASL: the exchange passes through to the
// broker on the client's own upstream connection. What the routes ask the
// broker on that connection (ask.go) is answered for the principal the
// broker built from it, so answers can be shared by every connection the
// broker sees as the same principal (route/authorize.go). The proxy infers
// that principal from the exchange it forwards, where the broker's default
// principal builder makes it certain:
//
//   - PLAIN: the authentication id of the SaslAuthenticate bytes
//     (authzid NUL authcid NUL password; Kafka refuses an authzid other
//     than authcid), principal User:<authcid>;
//   - SCRAM-SHA-256/512: the n= attribute of the client-first message
//     (saslname-decoded; Kafka refuses an a= other than it), principal
//     User:<name>, unless the tokenauth extension says it is a delegation
//     token, whose principal is the token's owner, not its id;
//   - no SaslHandshake at all: the connection's principal is the one of
//     the upstream transport, the same for every such connection of this
//     instance (ANONYMOUS on PLAINTEXT, or the principal of
//     upstream-tls.cert-file): TransportPrincipal. On a SASL listener the
//     broker answers nothing on a connection that did not authenticate,
//     so no answer is ever cached under it there.
//
// It counts only once the broker answered the last SaslAuthenticate of
// the mechanism with no error. Any other mechanism (GSSAPI under
// sasl.kerberos.principal.to.local.rules, OAUTHBEARER's principal claim,
// vendor mechanisms), a failed or unreadable exchange, and re-authentication
// until it succeeds leave the principal unknown (""): the routes then cache
// per connection. The client certificate of a TLS listener streamshift
// terminates is never the broker's principal: the broker sees only
// streamshift's upstream connection.

// TransportPrincipal is ClientInfo.Principal of a connection that did not
// authenticate with SASL.
const TransportPrincipal = "streamshift:transport"

// saslState is what a connection's SASL exchange told so far; on the
// connection's loop only.
type saslState struct {
	// mechanism of the last SaslHandshake; "" before any.
	mechanism string
	// user is the name read from the exchange; "" when unknown.
	user string
	// rounds are the SaslAuthenticate requests of this exchange.
	rounds int
	// principal is set once the broker accepted the exchange.
	principal string
}

// principal is ClientInfo.Principal.
func (s *saslState) current() string {
	if s.mechanism == "" {
		return TransportPrincipal
	}
	return s.principal
}

// saslRoundsOf is how many SaslAuthenticate requests a mechanism whose
// user streamshift can read takes; 0 for the others.
func saslRoundsOf(mechanism string) int {
	switch mechanism {
	case "PLAIN":
		return 1
	case "SCRAM-SHA-256", "SCRAM-SHA-512":
		return 2
	}
	return 0
}

// noteSaslHandshake starts a new exchange (a first authentication or a
// KIP-368 re-authentication): the principal is unknown until it succeeds.
func (cc *clientConn) noteSaslHandshake(msg []byte, version int16) {
	cc.sasl = saslState{mechanism: "?"}
	h, err := kafkaframe.ParseRequestHeader(msg)
	if err != nil {
		return
	}
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.SetVersion(version)
	if req.ReadFrom(msg[h.BodyAt:]) == nil && req.Mechanism != "" {
		cc.sasl.mechanism = req.Mechanism
	}
}

// noteSaslAuthenticate reads the user from a SaslAuthenticate request; the
// bytes (a password among them) are not kept.
func (cc *clientConn) noteSaslAuthenticate(msg []byte, version int16) {
	s := &cc.sasl
	s.rounds++
	s.principal = ""
	if s.rounds != 1 || saslRoundsOf(s.mechanism) == 0 {
		return
	}
	h, err := kafkaframe.ParseRequestHeader(msg)
	if err != nil {
		return
	}
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.SetVersion(version)
	if req.ReadFrom(msg[h.BodyAt:]) != nil {
		return
	}
	if s.mechanism == "PLAIN" {
		s.user = plainUser(req.SASLAuthBytes)
	} else {
		s.user = scramUser(req.SASLAuthBytes)
	}
}

// noteSaslAuthenticated reads the broker's answer to a SaslAuthenticate;
// ended reports that it ends the exchange: an error (the broker closes
// the connection), the last round of a mechanism whose rounds are known,
// or OAUTHBEARER's empty answer. Other mechanisms' exchanges (GSSAPI's
// rounds depend on Kerberos) end with the client's next request
// (saslExchangeEnds).
func (cc *clientConn) noteSaslAuthenticated(frame []byte, version int16) (ended bool) {
	s := &cc.sasl
	flexible, _ := kafkaframe.RequestFlexible(int16(kmsg.SASLAuthenticate), version)
	at, err := kafkaframe.ResponseBodyAt(frame[4:], int16(kmsg.SASLAuthenticate), flexible)
	if err != nil {
		s.user = ""
		return true
	}
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	resp.SetVersion(version)
	if resp.ReadFrom(frame[4+at:]) != nil || resp.ErrorCode != 0 {
		s.user = ""
		return true
	}
	if s.mechanism == "OAUTHBEARER" {
		// RFC 7628 and Kafka's OAuthBearerSaslServer: an empty answer
		// accepts the token; a failure answers its error document, and
		// the client's dummy reply then gets the error.
		return len(resp.SASLAuthBytes) == 0
	}
	rounds := saslRoundsOf(s.mechanism)
	if s.user != "" && s.rounds == rounds {
		s.principal = "User:" + s.user
	}
	return rounds > 0 && s.rounds >= rounds
}

// plainUser is the authentication id of a PLAIN message (RFC 4616), ""
// when the message is not one or asks for another authorization id.
func plainUser(b []byte) string {
	parts := bytes.Split(b, []byte{0})
	if len(parts) != 3 || len(parts[1]) == 0 {
		return ""
	}
	if len(parts[0]) > 0 && !bytes.Equal(parts[0], parts[1]) {
		return ""
	}
	return string(parts[1])
}

// scramUser is the user of a SCRAM client-first message (RFC 5802:
// gs2-header, then n=saslname,r=nonce[,extensions]), "" when the message
// is not one, names another authorization id or authenticates a
// delegation token.
func scramUser(b []byte) string {
	msg := string(b)
	// gs2-header: "n," | "y," | "p=..," then [ "a=" authzid ] ","
	first, rest, ok := strings.Cut(msg, ",")
	if !ok || (first != "n" && first != "y") {
		return ""
	}
	authzid, bare, ok := strings.Cut(rest, ",")
	if !ok {
		return ""
	}
	user := ""
	for i, attr := range strings.Split(bare, ",") {
		k, v, _ := strings.Cut(attr, "=")
		switch {
		case i == 0 && k == "n":
			user = decodeSaslName(v)
		case i == 0:
			return ""
		case k == "tokenauth" && v == "true":
			return "" // the principal is the token's owner
		}
	}
	if user == "" || (authzid != "" && decodeSaslName(strings.TrimPrefix(authzid, "a=")) != user) {
		return ""
	}
	return user
}

// decodeSaslName undoes SCRAM's escaping of ',' and '=' ("" when invalid).
func decodeSaslName(s string) string {
	out := strings.NewReplacer("=2C", ",", "=3D", "=").Replace(s)
	if strings.Count(s, "=") != strings.Count(s, "=2C")+strings.Count(s, "=3D") {
		return ""
	}
	return out
}
