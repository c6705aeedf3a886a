package translate

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/classictest"
)

// FuzzJoinGroupMetadata runs arbitrary "stream" protocol metadata through a
// classic JoinGroup and SyncGroup against a live streams group: whatever the
// bytes, the translator answers (never panics), and a join it accepts gives
// a decodable assignment.
func FuzzJoinGroupMetadata(f *testing.F) {
	// Real Kafka Streams subscriptions (classicstreams' test vectors).
	for _, dir := range []string{"vectors-3.9.2", "vectors-4.4.0"} {
		files, _ := filepath.Glob(filepath.Join("..", "classicstreams", "testdata", dir, "consumer-subscription-*.json"))
		for _, p := range files {
			var v struct{ Hex string }
			if b, err := os.ReadFile(p); err == nil && json.Unmarshal(b, &v) == nil {
				if raw, err := hex.DecodeString(v.Hex); err == nil {
					f.Add(raw)
				}
			}
		}
	}
	f.Add(classictest.JoinRequest(&testing.T{}, 9, "", "stream").Protocols[0].Metadata)
	f.Fuzz(func(t *testing.T, meta []byte) {
		tr, _ := fixture(t)
		tr.opts.NewMemberID = func(string) string { return "m" }
		req := kmsg.NewPtrJoinGroupRequest()
		req.Version, req.Group, req.MemberID = 5, "app", ""
		req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 10000, 60000
		req.ProtocolType = "consumer"
		req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "stream", Metadata: meta}}
		r, fwd := call(t, tr, req)
		if fwd {
			t.Fatal("forwarded")
		}
		j := r.(*kmsg.JoinGroupResponse)
		if j.ErrorCode != 0 {
			return
		}
		sync := kmsg.NewPtrSyncGroupRequest()
		sync.Version, sync.Group, sync.MemberID, sync.Generation = 3, "app", j.MemberID, j.Generation
		r, _ = call(t, tr, sync)
		if s := r.(*kmsg.SyncGroupResponse); s.ErrorCode == 0 && len(s.MemberAssignment) < 2 {
			t.Fatalf("assignment %x", s.MemberAssignment)
		}
	})
}
