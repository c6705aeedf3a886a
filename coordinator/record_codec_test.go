package coordinator

import (
	"reflect"
	"testing"

	"github.com/streamshift/streamshift/coordinator/streams"
)

// checkCodecRoundTrip encodes every record of the log and decodes it back:
// the records, and the state they replay to, must be the same.
func checkCodecRoundTrip(t *testing.T, recs []streams.Record) {
	t.Helper()
	decoded := make([]streams.Record, 0, len(recs))
	for _, r := range recs {
		k, v, err := streams.MarshalRecord(r)
		if err != nil {
			t.Fatalf("marshal %v: %v", r, err)
		}
		d, err := streams.UnmarshalRecord(k, v)
		if err != nil {
			t.Fatalf("unmarshal %s / %s: %v", k, v, err)
		}
		if !reflect.DeepEqual(r, d) {
			t.Fatalf("round trip of %s:\n%+v\n%+v", k, r, d)
		}
		decoded = append(decoded, d)
	}
	a, _ := streams.Replay(nil, recs)
	b, _ := streams.Replay(nil, decoded)
	for id := range a {
		if d := diffGroups(a[id], b[id]); d != "" {
			t.Fatalf("group %s: %s", id, d)
		}
	}
}
