package proxy

import (
	"bytes"
	"encoding/hex"
	"errors"
	"net"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func samplePrincipal() ConnPrincipal {
	cid := "app-1"
	return ConnPrincipal{
		Version: 0, Kind: PeerServe, Origin: "p1", Incarnation: 0x0102030405060708, ConnID: 42, Node: 3,
		ClientID: &cid, SoftwareName: "apache-kafka-java", SoftwareVersion: "4.4.0", RemoteAddr: "10.0.0.9:50123",
		Partition: 7, MapGeneration: 12, TimeoutMs: 20000,
	}
}

// connPrincipalV0Golden is the sample principal in version 0: a later
// release must keep reading these bytes the same way (the links are shared
// by two releases during an upgrade).
const connPrincipalV0Golden = "00" + "00" + // version, kind
	"03" + "7031" + // origin "p1"
	"0102030405060708" + // incarnation
	"000000000000002a" + // conn id 42
	"00000003" + // node 3
	"06" + "6170702d31" + // client id "app-1"
	"12" + "6170616368652d6b61666b612d6a617661" + // software name
	"06" + "342e342e30" + // software version
	"0f" + "31302e302e302e393a3530313233" + // remote addr
	"00000007" + "0000000c" + "00004e20" // partition, map generation, timeout ms

func TestConnPrincipalGolden(t *testing.T) {
	p := samplePrincipal()
	got := p.AppendTo(nil)
	want, err := hex.DecodeString(connPrincipalV0Golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("ConnPrincipal v0 bytes changed:\n got %x\nwant %x", got, want)
	}
	var back ConnPrincipal
	if err := back.ReadFrom(want); err != nil {
		t.Fatalf("read golden: %v", err)
	}
	if !reflect.DeepEqual(back, p) {
		t.Fatalf("golden read back as %+v, want %+v", back, p)
	}
}

// TestConnPrincipalNewerVersion: a newer release appends fields; this one
// reads the fields it knows and skips the rest.
func TestConnPrincipalNewerVersion(t *testing.T) {
	p := samplePrincipal()
	p.Version = 3
	b := append(p.AppendTo(nil), 0x05, 0xff, 0xee, 0xdd)
	var back ConnPrincipal
	if err := back.ReadFrom(b); err != nil {
		t.Fatalf("read a newer version: %v", err)
	}
	if !reflect.DeepEqual(back, p) {
		t.Fatalf("read %+v, want %+v", back, p)
	}
}

func TestConnPrincipalMalformed(t *testing.T) {
	good := samplePrincipal()
	full := good.AppendTo(nil)
	neg := good
	neg.Version = -1
	kind := good
	kind.Kind = 9
	noOrigin := good
	noOrigin.Origin = ""
	for name, b := range map[string][]byte{
		"empty":          nil,
		"truncated":      full[:len(full)-1],
		"huge string":    {0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"null origin":    append([]byte{0, 0, 0}, full[5:]...),
		"negative ver":   neg.AppendTo(nil),
		"unknown kind":   kind.AppendTo(nil),
		"no origin":      noOrigin.AppendTo(nil),
		"varint overrun": {0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
	} {
		var p ConnPrincipal
		if err := p.ReadFrom(b); !errors.Is(err, errMalformedPrincipal) {
			t.Errorf("%s: err %v, want a malformed principal", name, err)
		}
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
	nested := appendRequestFrame(nil, 5, &cid, envelopeRequest(&p, inner, net.IPv4(10, 0, 0, 9)))[4:]
	ok := envelopeRequest(&p, inner, net.IPv4(10, 0, 0, 9))
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
	p.ClientID, p.Kind, p.Version = nil, PeerServedGroups, 2
	f.Add(append(p.AppendTo(nil), 1, 2, 3))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var p ConnPrincipal
		if err := p.ReadFrom(b); err != nil {
			if !errors.Is(err, errMalformedPrincipal) {
				t.Fatalf("error %v does not say malformed", err)
			}
			return
		}
		// What reads must write back to the same fields (the bytes may
		// differ: trailing fields are skipped, varints may be padded).
		var again ConnPrincipal
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

// TestConnPrincipalCarriesPrincipal: version 1 carries the principal the
// origin knows for its client, so the owner shares authorization answers
// by it; a version 0 origin's principal is unknown (""), and the
// transport principal is the origin's own.
func TestConnPrincipalCarriesPrincipal(t *testing.T) {
	p := samplePrincipal()
	p.Version, p.Principal = connPrincipalVersion, "User:alice"
	var back ConnPrincipal
	if err := back.ReadFrom(p.AppendTo(nil)); err != nil {
		t.Fatal(err)
	}
	if back.Principal != "User:alice" || remotePrincipal(&back) != "User:alice" {
		t.Errorf("principal read back %q, at the owner %q; want User:alice", back.Principal, remotePrincipal(&back))
	}
	v0, _ := hex.DecodeString(connPrincipalV0Golden)
	if err := back.ReadFrom(v0); err != nil || back.Principal != "" {
		t.Errorf("version 0: principal %q (%v), want unknown", back.Principal, err)
	}
	p.Principal = TransportPrincipal
	if err := back.ReadFrom(p.AppendTo(nil)); err != nil {
		t.Fatal(err)
	}
	if got := remotePrincipal(&back); got != TransportPrincipal+"@p1" {
		t.Errorf("transport principal of origin p1 at the owner: %q, want %q", got, TransportPrincipal+"@p1")
	}
}
