package coordinator

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

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

func TestRecordCodecTombstones(t *testing.T) {
	for _, r := range []streams.Record{
		{Type: streams.RecordGroupMetadata, GroupID: "g"},
		{Type: streams.RecordCurrentMemberAssignment, GroupID: "g", MemberID: "m"},
	} {
		k, v, err := streams.MarshalRecord(r)
		if err != nil || v != nil {
			t.Fatalf("%v: %s %v", r, v, err)
		}
		d, err := streams.UnmarshalRecord(k, nil)
		if err != nil || !reflect.DeepEqual(d, r) {
			t.Fatalf("%v: %+v %v", r, d, err)
		}
	}
	for _, bad := range [][2]string{
		{`{"v":2,"type":17,"group":"g"}`, ""},
		{`{"v":1,"type":18,"group":"g"}`, ""},
		{`{"v":1,"type":19,"group":"g"}`, ""},
		{`{"v":1,"type":17,"group":"g","member":"m"}`, ""},
		{`{"v":1,"type":22,"group":"g","member":"m"}`, `{"assigned":{"Active":{"0":[-1]}}}`},
		{`{"v":1,"type":17,"group":"g"}`, `{"Epoch":"x"}`},
		{`{"v":1,"type":17,"group":"g","extra":1}`, ""},
	} {
		var v []byte
		if bad[1] != "" {
			v = []byte(bad[1])
		}
		if _, err := streams.UnmarshalRecord([]byte(bad[0]), v); err == nil {
			t.Errorf("accepted %s / %s", bad[0], bad[1])
		}
	}
}

func FuzzUnmarshalRecord(f *testing.F) {
	h := newHarness(&testing.T{}, nil)
	h.md.SetTopic("foo", 4)
	h.md.SetTopic("app-store-changelog", 4)
	h.c.StreamsGroupHeartbeat(joinReq("g", "m1", "p1", statefulTopology("foo")), streams.ClientInfo{}, func(*kmsg.StreamsGroupHeartbeatResponse) {})
	for _, r := range h.log.All() {
		k, v, _ := streams.MarshalRecord(r)
		f.Add(k, v)
	}
	// Every golden record, and what a newer streamshift may write.
	for _, g := range goldenRecords() {
		k, v, _ := streams.MarshalRecord(g.record)
		f.Add(k, v)
		f.Add(k, append([]byte(`{"v":2,"futureField":[1],`), v[1:]...))
	}
	f.Add([]byte(`{"v":1,"type":1999,"group":"g","member":"m"}`), []byte(`{}`))
	f.Fuzz(func(t *testing.T, k, v []byte) {
		r, err := streams.UnmarshalRecord(k, v)
		if err != nil {
			return
		}
		// Whatever decodes must replay without error and encode again.
		if _, err := streams.Replay(nil, []streams.Record{r}); err != nil {
			t.Fatalf("replay of a decoded record: %v", err)
		}
		if _, _, err := streams.MarshalRecord(r); err != nil {
			t.Fatalf("re-encode: %v", err)
		}
	})
}

func printed(vs ...any) string {
	out := ""
	for _, v := range vs {
		out += fmt.Sprintf("%+v;", deepValue(v))
	}
	return out
}

// deepValue dereferences pointers for printing.
func deepValue(v any) any {
	rv := reflect.ValueOf(v)
	for rv.IsValid() && rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if !rv.IsValid() {
		return nil
	}
	return rv.Interface()
}
