package topology

import (
	"reflect"
	"testing"
)

// counts builds a PartitionCounts/countFunc over a fixed map.
func counts(m map[string]int32) func(string) (int32, bool) {
	return func(t string) (int32, bool) {
		n, ok := m[t]
		return n, ok
	}
}

// wantErr checks an *Error against the expected status or error code and
// the exact message; a zero want means no error.
func wantErr(t *testing.T, got *Error, want Error) {
	t.Helper()
	if want == (Error{}) {
		if got != nil {
			t.Fatalf("unexpected error: %v", got)
		}
		return
	}
	if got == nil {
		t.Fatalf("no error, want %+v", want)
	}
	if *got != want {
		t.Fatalf("error\n got %+v\nwant %+v", *got, want)
	}
}

func wantEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s\n got %#v\nwant %#v", what, got, want)
	}
}
