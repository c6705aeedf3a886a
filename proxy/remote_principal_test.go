package proxy

import (
	"testing"

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
