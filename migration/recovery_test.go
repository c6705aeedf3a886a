package migration

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestRecoveryHoldsOneJoinPerLiveConnection: a client that joins, drops its
// connection and joins again, over and over, while its group recovers holds
// one join, not one per connection (memory stays bounded).
func TestRecoveryHoldsOneJoinPerLiveConnection(t *testing.T) {
	r := newRecovery(nil, 10*time.Second)
	r.groups["legacy"] = &recovering{stale: map[string]bool{}}
	req := kmsg.NewPtrJoinGroupRequest()
	req.Group = "legacy"
	for i := 0; i < 1000; i++ {
		done := make(chan struct{})
		if v, _ := r.Join(req, RecoveryJoin{Done: done, Rerun: func() {}}); v != JoinHeld {
			t.Fatalf("join %d of a recovering group: verdict %d, want held", i, v)
		}
		close(done)
	}
	live := make(chan struct{})
	r.Join(req, RecoveryJoin{Done: live, Rerun: func() {}})
	if n := len(r.groups["legacy"].held); n != 1 {
		t.Fatalf("%d joins held, want the one of the live connection", n)
	}
}
