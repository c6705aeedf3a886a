package streams

import (
	"fmt"
	"reflect"
	"testing"
)

func TestRecordCodecTombstones(t *testing.T) {
	for _, r := range []Record{
		{Type: RecordGroupMetadata, GroupID: "g"},
		{Type: RecordCurrentMemberAssignment, GroupID: "g", MemberID: "m"},
	} {
		k, v, err := MarshalRecord(r)
		if err != nil || v != nil {
			t.Fatalf("%v: %s %v", r, v, err)
		}
		d, err := UnmarshalRecord(k, nil)
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
		if _, err := UnmarshalRecord([]byte(bad[0]), v); err == nil {
			t.Errorf("accepted %s / %s", bad[0], bad[1])
		}
	}
}

func FuzzUnmarshalRecord(f *testing.F) {
	for _, r := range runHeartbeats(&testing.T{}, joinRequest("m1", "p1")) {
		k, v, _ := MarshalRecord(r)
		f.Add(k, v)
	}
	// Every golden record, and what a newer streamshift may write.
	for _, g := range goldenRecords() {
		k, v, _ := MarshalRecord(g.record)
		f.Add(k, v)
		f.Add(k, append([]byte(`{"v":2,"futureField":[1],`), v[1:]...))
	}
	f.Add([]byte(`{"v":1,"type":1999,"group":"g","member":"m"}`), []byte(`{}`))
	f.Fuzz(func(t *testing.T, k, v []byte) {
		r, err := UnmarshalRecord(k, v)
		if err != nil {
			return
		}
		// Whatever decodes must replay without error and encode again.
		if _, err := Replay(nil, []Record{r}); err != nil {
			t.Fatalf("replay of a decoded record: %v", err)
		}
		if _, _, err := MarshalRecord(r); err != nil {
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
