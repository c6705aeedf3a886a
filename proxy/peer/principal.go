package peer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Between streamshift instances a request travels in a Kafka EnvelopeRequest
// (key 58, KIP-590), exactly as Kafka defines it. Its RequestPrincipal is
// opaque bytes of a pluggable serde in Kafka; streamshift's serde is
// ConnPrincipal: for streamshift the principal *is* the client connection
// the request arrived on (SASL passes through, so no instance knows the
// client's principal, only which connection carries it).

// CallKind says what a peer is asked to do with an envelope. Each kind
// has its own budget on a link (link.go), so the leaves (upstream,
// served-groups) can never wait behind the serve calls that wait on them.
type CallKind int8

const (
	// KindServe (origin → owner): run the route handler of a group the
	// receiver owns and return the response frame a client would get.
	KindServe CallKind = 0
	// KindUpstream (owner → origin): send RequestData on the upstream
	// connection of ConnID and return the broker's answer. A leaf.
	KindUpstream CallKind = 1
	// KindServedGroups (origin → each peer): the groups the receiver
	// serves, for a ListGroups. A leaf.
	KindServedGroups CallKind = 2
	// KindConnClosed (origin → a peer its serve calls went to): the client
	// connection ConnID closed (proxy/peer_conn_closed.go). A leaf; an older
	// peer answers UNSUPPORTED_VERSION and ignores it.
	KindConnClosed CallKind = 3

	// Kinds is how many kinds this release knows: a principal of another
	// kind does not read.
	Kinds = 4
)

func (k CallKind) String() string {
	switch k {
	case KindServe:
		return "serve"
	case KindUpstream:
		return "upstream"
	case KindServedGroups:
		return "served-groups"
	case KindConnClosed:
		return "conn-closed"
	}
	return fmt.Sprintf("kind(%d)", int8(k))
}

// PrincipalVersion is the version this release writes. A reader takes
// any version ≥ 0, reads the fields it knows and skips the rest, so two
// releases can share links; a newer version only ever appends fields.
// Version 1 appends Principal.
const PrincipalVersion = 1

// ConnPrincipal is the envelope principal: the client connection a request
// came from, and what the origin routed it by.
type ConnPrincipal struct {
	Version int8
	Kind    CallKind
	// Origin is the proxy id of the instance the client is connected to.
	Origin string
	// Incarnation is random per process start of Origin, so a connection
	// id reused after a restart never hits an answer cached for the old one.
	Incarnation int64
	// ConnID is the client connection at Origin.
	ConnID int64
	// Node is the upstream node whose listener the client connected to.
	Node int32
	// ClientID (nullable in Kafka's request header), SoftwareName and
	// SoftwareVersion (ApiVersions v3+) are the client's own.
	ClientID        *string
	SoftwareName    string
	SoftwareVersion string
	// RemoteAddr is the client's host:port as Origin sees it.
	RemoteAddr string
	// Partition and MapGeneration are what the origin routed by: the
	// group's log partition and its cluster map generation.
	Partition     int32
	MapGeneration int32
	// TimeoutMs is the time left for the call when it was sent.
	TimeoutMs int32
	// Principal (version 1) is ClientInfo.Principal at Origin: the
	// principal the broker sees on the client's connection, "" when
	// unknown (version 0).
	Principal string
}

// AppendTo appends the principal's bytes, in Kafka's compact types.
func (p *ConnPrincipal) AppendTo(dst []byte) []byte {
	dst = append(dst, byte(p.Version), byte(p.Kind))
	dst = kbin.AppendCompactString(dst, p.Origin)
	dst = binary.BigEndian.AppendUint64(dst, uint64(p.Incarnation))
	dst = binary.BigEndian.AppendUint64(dst, uint64(p.ConnID))
	dst = binary.BigEndian.AppendUint32(dst, uint32(p.Node))
	dst = kbin.AppendCompactNullableString(dst, p.ClientID)
	dst = kbin.AppendCompactString(dst, p.SoftwareName)
	dst = kbin.AppendCompactString(dst, p.SoftwareVersion)
	dst = kbin.AppendCompactString(dst, p.RemoteAddr)
	dst = binary.BigEndian.AppendUint32(dst, uint32(p.Partition))
	dst = binary.BigEndian.AppendUint32(dst, uint32(p.MapGeneration))
	dst = binary.BigEndian.AppendUint32(dst, uint32(p.TimeoutMs))
	if p.Version >= 1 {
		dst = kbin.AppendCompactString(dst, p.Principal)
	}
	return dst
}

// ErrMalformedPrincipal is wrapped by every ReadFrom failure.
var ErrMalformedPrincipal = errors.New("malformed envelope principal")

// ReadFrom reads a principal, bounds-checked: short or inconsistent bytes
// are an error wrapping ErrMalformedPrincipal, never a panic. Bytes after
// the fields this release knows are a newer version's and are skipped.
func (p *ConnPrincipal) ReadFrom(src []byte) error {
	r := kbin.Reader{Src: src}
	*p = ConnPrincipal{}
	p.Version = r.Int8()
	p.Kind = CallKind(r.Int8())
	p.Origin = r.CompactString()
	p.Incarnation = r.Int64()
	p.ConnID = r.Int64()
	p.Node = r.Int32()
	p.ClientID = r.CompactNullableString()
	p.SoftwareName = r.CompactString()
	p.SoftwareVersion = r.CompactString()
	p.RemoteAddr = r.CompactString()
	p.Partition = r.Int32()
	p.MapGeneration = r.Int32()
	p.TimeoutMs = r.Int32()
	if p.Version >= 1 {
		p.Principal = r.CompactString()
	}
	if !r.Ok() {
		return fmt.Errorf("%w: %d bytes end inside the version %d fields", ErrMalformedPrincipal, len(src), PrincipalVersion)
	}
	if p.Version < 0 {
		return fmt.Errorf("%w: version %d", ErrMalformedPrincipal, p.Version)
	}
	if p.Kind < 0 || p.Kind >= Kinds {
		return fmt.Errorf("%w: unknown call kind %d", ErrMalformedPrincipal, p.Kind)
	}
	if p.Origin == "" {
		return fmt.Errorf("%w: no origin instance", ErrMalformedPrincipal)
	}
	return nil
}

// EnvelopeRequest wraps a request (header and body, without the size
// prefix) for a peer. clientIP is the client's address (4 or 16 bytes, as
// Kafka's ClientHostAddress).
func EnvelopeRequest(p *ConnPrincipal, requestData []byte, clientIP net.IP) *kmsg.EnvelopeRequest {
	req := kmsg.NewPtrEnvelopeRequest()
	req.RequestData = requestData
	req.RequestPrincipal = p.AppendTo(nil)
	if v4 := clientIP.To4(); v4 != nil {
		clientIP = v4
	}
	req.ClientHostAddress = clientIP
	return req
}

// Call is an envelope the internal listener received, opened.
type Call struct {
	Principal ConnPrincipal
	// RequestData is the wrapped request: header and body, no size prefix.
	RequestData []byte
	ClientIP    net.IP
	// Key, Version and Corr are the wrapped request header's.
	Key, Version int16
	Corr         int32
}

// EnvelopeError is the envelope answer to a call that was not done.
func EnvelopeError(code int16) *kmsg.EnvelopeResponse {
	resp := kmsg.NewPtrEnvelopeResponse()
	resp.ErrorCode = code
	return resp
}
