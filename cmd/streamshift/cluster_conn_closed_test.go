package main

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestClusterConnCloseReachesOwner (issue #41): a streams member connected
// to the instance that does not own its group closes its connection; the
// owner hears of it over the link and the disconnect expiry fences the
// member K heartbeat intervals later (3 × 0.5 s here), not at its session
// expiry (45 s). Before, a hopped request carried no close signal, so
// behind one address the expiry never fired.
func TestClusterConnCloseReachesOwner(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	ins, owners, _ := twoInstances(t, ctx, "STREAMSHIFT_MIGRATION_POLICY=upgrade",
		"STREAMSHIFT_STREAMS_MIN_HEARTBEAT_INTERVAL_MS=500", "STREAMSHIFT_STREAMS_HEARTBEAT_INTERVAL_MS=500")
	owner, other := ins[0], ins[1]
	group := groupOwnedBy(owners, owner.id, "gone")

	// The member's own connection to the non-owner, as a Java client.
	cl, err := kgo.NewClient(kgo.SeedBrokers(other.bootstrap), kgo.SoftwareNameAndVersion("apache-kafka-java", "4.4.0"))
	if err != nil {
		t.Fatal(err)
	}
	at := &testInstance{id: other.id + "-own", cl: cl}
	m := &member{id: "m1"}
	m.joinUntilAssigned(t, ctx, at, group, "in")
	if g := describeStreams(t, ctx, owner, group); len(g.Members) != 1 {
		t.Fatalf("describe at the owner: %+v", g)
	}
	cl.Close()
	closed := time.Now()

	// The session is 45 s; the expiry fires 1.5 s after the close. The
	// bound leaves a loaded machine a wide margin below the session.
	for {
		g := describeStreams(t, ctx, owner, group)
		if len(g.Members) == 0 {
			t.Logf("the member was fenced %v after its connection closed at the non-owner", time.Since(closed).Round(time.Millisecond))
			return
		}
		if time.Since(closed) > 25*time.Second {
			t.Fatalf("the member is still in the group %v after its connection closed at the non-owner: %+v", time.Since(closed), g.Members)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
