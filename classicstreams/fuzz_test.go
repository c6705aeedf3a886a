package classicstreams

import (
	"bytes"
	"reflect"
	"testing"
)

// The fuzz targets seed from the golden vectors and the every-version
// encodings. Properties: no panic; a failure is a DecodeError inside the
// input; a decoded value that encodes decodes again to the same value.

func addSeeds(f *testing.F, kind string) {
	for _, b := range hostileSamples(f)[kind] {
		f.Add(b)
	}
}

func FuzzDecodeSubscriptionInfo(f *testing.F) {
	addSeeds(f, "subscription")
	f.Fuzz(func(t *testing.T, b []byte) {
		if decodeChecked(t, "subscription", b) != nil {
			return
		}
		s, _ := DecodeSubscriptionInfo(b)
		enc, err := s.Encode()
		if err != nil {
			return // e.g. latest supported below version, which Java rejects too
		}
		again, err := DecodeSubscriptionInfo(enc)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		normalizeSubscription(s)
		normalizeSubscription(again)
		if !reflect.DeepEqual(s, again) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", again, s)
		}
	})
}

func FuzzDecodeAssignmentInfo(f *testing.F) {
	addSeeds(f, "assignment")
	f.Fuzz(func(t *testing.T, b []byte) {
		if decodeChecked(t, "assignment", b) != nil {
			return
		}
		a, _ := DecodeAssignmentInfo(b)
		enc, err := a.Encode()
		if err != nil {
			t.Fatalf("a decoded AssignmentInfo does not encode: %v", err)
		}
		again, err := DecodeAssignmentInfo(enc)
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		normalizeAssignment(a)
		normalizeAssignment(again)
		if !reflect.DeepEqual(a, again) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", again, a)
		}
	})
}

func FuzzDecodeConsumerSubscription(f *testing.F) {
	addSeeds(f, "consumer-subscription")
	f.Fuzz(func(t *testing.T, b []byte) {
		if decodeChecked(t, "consumer-subscription", b) != nil {
			return
		}
		s, _ := DecodeConsumerSubscription(b)
		again, err := DecodeConsumerSubscription(s.Encode())
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if s.Version > MaxConsumerProtocolVersion {
			s.Version = MaxConsumerProtocolVersion
		}
		again.UserDataOffset = s.UserDataOffset
		normalizeConsumerSubscription(s)
		normalizeConsumerSubscription(again)
		if !reflect.DeepEqual(s, again) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", again, s)
		}
	})
}

func FuzzDecodeConsumerAssignment(f *testing.F) {
	addSeeds(f, "consumer-assignment")
	f.Fuzz(func(t *testing.T, b []byte) {
		if decodeChecked(t, "consumer-assignment", b) != nil {
			return
		}
		a, _ := DecodeConsumerAssignment(b)
		again, err := DecodeConsumerAssignment(a.Encode())
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if a.Version > MaxConsumerProtocolVersion {
			a.Version = MaxConsumerProtocolVersion
		}
		if len(a.AssignedPartitions) != len(again.AssignedPartitions) || !bytes.Equal(a.UserData, again.UserData) ||
			(a.UserData == nil) != (again.UserData == nil) || a.Version != again.Version {
			t.Fatalf("round trip:\n got %+v\nwant %+v", again, a)
		}
	})
}
