package proxy

import (
	"errors"
	"net"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/proxy/peer"
)

// samplePrincipal is a serve call's principal of origin p1.
func samplePrincipal() peer.ConnPrincipal {
	cid := "app-1"
	return peer.ConnPrincipal{
		Version: 0, Kind: peer.KindServe, Origin: "p1", Incarnation: 0x0102030405060708, ConnID: 42, Node: 3,
		ClientID: &cid, SoftwareName: "apache-kafka-java", SoftwareVersion: "4.4.0", RemoteAddr: "10.0.0.9:50123",
		Partition: 7, MapGeneration: 12, TimeoutMs: 20000,
	}
}

// TestOpenEnvelopeMalformed: what the listener answers an envelope it cannot
// open, with Kafka's codes (KafkaApis.handleEnvelope: a principal the serde
// cannot read is PRINCIPAL_DESERIALIZATION_FAILURE; a bad client address or
// wrapped header is INVALID_REQUEST).
func TestOpenEnvelopeMalformed(t *testing.T) {
	p := samplePrincipal()
	cid := "app-1"
	inner := appendRequestFrame(nil, 5, &cid, &kmsg.HeartbeatRequest{Version: 4, Group: "g"})[4:]
	nested := appendRequestFrame(nil, 5, &cid, peer.EnvelopeRequest(&p, inner, net.IPv4(10, 0, 0, 9)))[4:]
	ok := peer.EnvelopeRequest(&p, inner, net.IPv4(10, 0, 0, 9))
	for name, tc := range map[string]struct {
		mut  func(r *kmsg.EnvelopeRequest)
		code int16
	}{
		"ok":              {func(*kmsg.EnvelopeRequest) {}, 0},
		"principal":       {func(r *kmsg.EnvelopeRequest) { r.RequestPrincipal = r.RequestPrincipal[:3] }, kerr.PrincipalDeserializationFailure.Code},
		"no principal":    {func(r *kmsg.EnvelopeRequest) { r.RequestPrincipal = nil }, kerr.PrincipalDeserializationFailure.Code},
		"address 5 bytes": {func(r *kmsg.EnvelopeRequest) { r.ClientHostAddress = []byte{1, 2, 3, 4, 5} }, kerr.InvalidRequest.Code},
		"no header":       {func(r *kmsg.EnvelopeRequest) { r.RequestData = []byte{0, 12} }, kerr.InvalidRequest.Code},
		"unknown key":     {func(r *kmsg.EnvelopeRequest) { r.RequestData = []byte{0x7f, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff} }, kerr.InvalidRequest.Code},
		"nested":          {func(r *kmsg.EnvelopeRequest) { r.RequestData = nested }, kerr.InvalidRequest.Code},
	} {
		req := *ok
		tc.mut(&req)
		c, code, err := openEnvelope(&req)
		if code != tc.code || (code == 0) != (err == nil) {
			t.Errorf("%s: code %d err %v, want code %d", name, code, err, tc.code)
			continue
		}
		if code == 0 && (c.Key != int16(kmsg.Heartbeat) || c.Corr != 5 || c.Principal.Origin != "p1" || !c.ClientIP.Equal(net.IPv4(10, 0, 0, 9))) {
			t.Errorf("%s: opened %+v", name, c)
		}
	}
}

func FuzzConnPrincipal(f *testing.F) {
	p := samplePrincipal()
	f.Add(p.AppendTo(nil))
	p.ClientID, p.Kind, p.Version = nil, peer.KindServedGroups, 2
	f.Add(append(p.AppendTo(nil), 1, 2, 3))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var p peer.ConnPrincipal
		if err := p.ReadFrom(b); err != nil {
			if !errors.Is(err, peer.ErrMalformedPrincipal) {
				t.Fatalf("error %v does not say malformed", err)
			}
			return
		}
		// What reads must write back to the same fields (the bytes may
		// differ: trailing fields are skipped, varints may be padded).
		var again peer.ConnPrincipal
		if err := again.ReadFrom(p.AppendTo(nil)); err != nil || !reflect.DeepEqual(again, p) {
			t.Fatalf("re-encoded %+v read back as %+v (%v)", p, again, err)
		}
		// An envelope carrying these bytes opens or answers a code.
		req := kmsg.NewPtrEnvelopeRequest()
		req.RequestPrincipal, req.ClientHostAddress, req.RequestData = b, []byte{127, 0, 0, 1}, b
		if _, code, err := openEnvelope(req); (code == 0) != (err == nil) {
			t.Fatalf("code %d with error %v", code, err)
		}
	})
}

// TestRemotePrincipal: the owner shares authorization answers by the
// principal a version 1 origin carries for its client, and the transport
// principal is the origin's own.
func TestRemotePrincipal(t *testing.T) {
	p := samplePrincipal()
	p.Version, p.Principal = peer.PrincipalVersion, "User:alice"
	var back peer.ConnPrincipal
	if err := back.ReadFrom(p.AppendTo(nil)); err != nil {
		t.Fatal(err)
	}
	if back.Principal != "User:alice" || remotePrincipal(&back) != "User:alice" {
		t.Errorf("principal read back %q, at the owner %q; want User:alice", back.Principal, remotePrincipal(&back))
	}
	p.Principal = TransportPrincipal
	if err := back.ReadFrom(p.AppendTo(nil)); err != nil {
		t.Fatal(err)
	}
	if got := remotePrincipal(&back); got != TransportPrincipal+"@p1" {
		t.Errorf("transport principal of origin p1 at the owner: %q, want %q", got, TransportPrincipal+"@p1")
	}
}
