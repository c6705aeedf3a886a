package peer

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"testing"
)

func samplePrincipal() ConnPrincipal {
	cid := "app-1"
	return ConnPrincipal{
		Version: 0, Kind: KindServe, Origin: "p1", Incarnation: 0x0102030405060708, ConnID: 42, Node: 3,
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
		if err := p.ReadFrom(b); !errors.Is(err, ErrMalformedPrincipal) {
			t.Errorf("%s: err %v, want a malformed principal", name, err)
		}
	}
}

// TestConnPrincipalCarriesPrincipal: version 1 carries the principal the
// origin knows for its client; a version 0 origin's principal is unknown
// ("").
func TestConnPrincipalCarriesPrincipal(t *testing.T) {
	p := samplePrincipal()
	p.Version, p.Principal = PrincipalVersion, "User:alice"
	var back ConnPrincipal
	if err := back.ReadFrom(p.AppendTo(nil)); err != nil {
		t.Fatal(err)
	}
	if back.Principal != "User:alice" {
		t.Errorf("principal read back %q, want User:alice", back.Principal)
	}
	v0, _ := hex.DecodeString(connPrincipalV0Golden)
	if err := back.ReadFrom(v0); err != nil || back.Principal != "" {
		t.Errorf("version 0: principal %q (%v), want unknown", back.Principal, err)
	}
}
