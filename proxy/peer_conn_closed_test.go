package proxy

import (
	"context"
	"testing"
	"time"

	"github.com/streamshift/streamshift/proxy/peer"
)

// TestRemoteClosesFailSafe: a remote connection's close signal closes only
// on a conn-closed call of its own origin start; a restart of the origin
// (a new incarnation) forgets the earlier start's signals without closing
// them (a dead origin is not a closed connection), and a call naming an
// unknown connection is answered and does nothing.
func TestRemoteClosesFailSafe(t *testing.T) {
	p := &Proxy{}
	first := peer.ConnPrincipal{Origin: "b", Incarnation: 1, ConnID: 7}
	sig, _ := p.remoteCloses.signal(&first)
	if again, _ := p.remoteCloses.signal(&first); again != sig {
		t.Fatal("two serve calls of one connection got two signals")
	}
	other := first
	other.ConnID = 8
	sigOther, _ := p.remoteCloses.signal(&other)

	// Another start of b names connection 7 too: not the same connection.
	restarted := first
	restarted.Incarnation = 2
	sigNew, newAt := p.remoteCloses.signal(&restarted)
	if sigNew == sig {
		t.Fatal("a restarted origin's connection shares the earlier start's signal")
	}
	if n := p.remoteCloses.len(); n != 1 {
		t.Fatalf("%d signals held after the origin restarted, want only the new start's", n)
	}
	a := <-p.connClosedPeer(context.Background(), &peer.Call{Principal: first})
	if a.Code != 0 {
		t.Fatalf("conn-closed answered %d", a.Code)
	}
	for name, s := range map[string]<-chan struct{}{"earlier start's": sig, "earlier start's other": sigOther, "new start's": sigNew} {
		select {
		case <-s:
			t.Fatalf("the %s signal closed without a conn-closed call of its own", name)
		default:
		}
	}
	if !newAt.get().IsZero() {
		t.Fatal("an open connection has a close time")
	}
	before := time.Now()
	<-p.connClosedPeer(context.Background(), &peer.Call{Principal: restarted})
	select {
	case <-sigNew:
	default:
		t.Fatal("the conn-closed call did not close the connection's signal")
	}
	if at := newAt.get(); at.Before(before) || at.After(time.Now()) {
		t.Fatalf("the closed connection's close time %v, want the conn-closed call's (after %v)", at, before)
	}
	if n := p.remoteCloses.len(); n != 0 {
		t.Fatalf("%d signals held after the close", n)
	}
}
