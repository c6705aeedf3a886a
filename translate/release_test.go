package translate

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
	"github.com/streamshift/streamshift/internal/classictest"
)

// TestClassicMemberOfUntestedRelease: a classic member of a kafka-streams
// release older than 2.8 (SubscriptionInfo below v9) is served, and the
// operator is told once per join that nothing proves the migration for it;
// 2.8 (v9) and a member pinned below v9 by upgrade.from but supporting v9
// are quiet.
func TestClassicMemberOfUntestedRelease(t *testing.T) {
	for _, c := range []struct {
		name            string
		version, latest int32
		warned          bool
	}{
		{"kafka-streams 2.7 (v8)", 8, 8, true},
		{"kafka-streams 2.8 (v9)", 9, 9, false},
		{"2.8 pinned to v7 by upgrade.from", 7, 9, false},
	} {
		c := c
		t.Run(c.name, func(t *testing.T) {
			var logged bytes.Buffer
			sc, _ := classictest.StreamsGroup(t)
			tr := New(Options{Coordinator: sc, NewMemberID: classictest.MemberIDs(), Log: zerolog.New(&logged)})
			req := classictest.JoinRequest(t, 5, "", "stream")
			req.InstanceID = kmsg.StringPtr("old-1")
			info := &classicstreams.SubscriptionInfo{Version: c.version, LatestSupportedVersion: c.latest}
			ud, err := info.Encode()
			if err != nil {
				t.Fatal(err)
			}
			sub := &classicstreams.ConsumerSubscription{Version: 1, Topics: []string{"foo"}, UserData: ud, GenerationID: -1}
			req.Protocols[0].Metadata = sub.Encode()
			r, forwarded := call(t, tr, req)
			if forwarded || r.(*kmsg.JoinGroupResponse).ErrorCode != 0 {
				t.Fatalf("join: forwarded %v, %+v", forwarded, r)
			}
			if got := strings.Contains(logged.String(), "older than 2.8"); got != c.warned {
				t.Fatalf("warned %v, want %v (log %q)", got, c.warned, logged.String())
			}
		})
	}
}
