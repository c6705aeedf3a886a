package classicstreams

import (
	"encoding/binary"
	"errors"
	"runtime"
	"testing"
)

type decodeFunc func([]byte) error

var decoders = map[string]decodeFunc{
	"subscription":          func(b []byte) error { _, err := DecodeSubscriptionInfo(b); return err },
	"assignment":            func(b []byte) error { _, err := DecodeAssignmentInfo(b); return err },
	"consumer-subscription": func(b []byte) error { _, err := DecodeConsumerSubscription(b); return err },
	"consumer-assignment":   func(b []byte) error { _, err := DecodeConsumerAssignment(b); return err },
}

// hostileSamples are the golden vectors plus every-version encodings.
func hostileSamples(t testing.TB) map[string][][]byte {
	out := map[string][][]byte{}
	seen := map[string]bool{}
	for _, v := range loadVectors(t) {
		if !seen[string(v.bytes)] { // both Kafka versions write the same bytes
			seen[string(v.bytes)] = true
			out[v.Kind] = append(out[v.Kind], v.bytes)
		}
	}
	for v := int32(1); v <= LatestSupportedVersion; v++ {
		s := subscriptionAt(v)
		b, err := s.Encode()
		if err != nil {
			t.Fatal(err)
		}
		out["subscription"] = append(out["subscription"], b)
		a := assignmentAt(v)
		if b, err = a.Encode(); err != nil {
			t.Fatal(err)
		}
		out["assignment"] = append(out["assignment"], b)
	}
	return out
}

// decodeChecked decodes b, turning a panic into a test failure, and checks
// that a failure is a DecodeError with an offset inside the input.
func decodeChecked(t *testing.T, kind string, b []byte) error {
	t.Helper()
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("%s: panic on %x: %v", kind, b, p)
			}
		}()
		err = decoders[kind](b)
	}()
	if err != nil {
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Fatalf("%s: error is not a DecodeError: %v", kind, err)
		}
		if de.Offset < 0 || de.Offset > len(b) {
			t.Fatalf("%s: offset %d outside input of %d bytes", kind, de.Offset, len(b))
		}
	}
	return err
}

// Truncation at every byte fails with ErrTruncated or ErrLengthTooLarge,
// except the future SubscriptionInfo, which needs only its 8-byte header.
func TestTruncatedAtEveryByte(t *testing.T) {
	for kind, samples := range hostileSamples(t) {
		for _, full := range samples {
			for i := range len(full) {
				err := decodeChecked(t, kind, full[:i])
				if err == nil {
					if kind == "subscription" && i >= 8 && int32(binary.BigEndian.Uint32(full)) > LatestSupportedVersion {
						continue
					}
					t.Fatalf("%s: prefix %d of %x decoded", kind, i, full)
				}
				if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrLengthTooLarge) {
					t.Fatalf("%s: prefix %d: %v", kind, i, err)
				}
			}
		}
	}
}

// Every 4- and 2-byte window overwritten with hostile lengths: no panic,
// and the allocation stays within what the input can justify.
func TestHostileLengths(t *testing.T) {
	patterns32 := []uint32{0xffffffff, 0xfffffffe, 0x80000000, 0x7fffffff, 0x00100000}
	patterns16 := []uint16{0xffff, 0xfffe, 0x8000, 0x7fff}
	for kind, samples := range hostileSamples(t) {
		for _, orig := range samples {
			b := make([]byte, len(orig))
			// One (stop-the-world) measurement per offset keeps the test
			// fast; the bound is per decode times the decodes measured.
			bound := allocBound(len(orig)) * uint64(len(patterns32)+len(patterns16))
			for i := 0; i+2 <= len(orig); i++ {
				before := heapAllocs()
				for _, p := range patterns32 {
					if i+4 <= len(orig) {
						copy(b, orig)
						binary.BigEndian.PutUint32(b[i:], p)
						decodeChecked(t, kind, b)
					}
				}
				for _, p := range patterns16 {
					copy(b, orig)
					binary.BigEndian.PutUint16(b[i:], p)
					decodeChecked(t, kind, b)
				}
				if got := heapAllocs() - before; got > bound {
					t.Fatalf("%s: hostile lengths at byte %d of %x allocated %d bytes", kind, i, orig, got)
				}
			}
		}
	}
}

// allocBound is generous but linear: the largest decoded element (a string
// header per 2-byte empty topic name) is 8 times its smallest wire form.
func allocBound(n int) uint64 { return uint64(32*n + 16<<10) }

// heapAllocs reads the cumulative bytes allocated on the heap (exact, as
// ReadMemStats flushes the per-P caches).
func heapAllocs() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

func TestNegativeLengthsRejected(t *testing.T) {
	for _, tc := range []struct {
		kind string
		hex  string
	}{
		{"subscription", "00000001 11111111222233334444555555555555 fffffffe"},                   // prevTasks
		{"subscription", "0000000b 0000000b 11111111222233334444555555555555 ffffffff"},          // userEndPoint null
		{"subscription", "0000000b 0000000b 11111111222233334444555555555555 00000000 ffffffff"}, // offset sums
		{"assignment", "00000001 80000000"},                                                      // active count
		{"assignment", "0000000b 0000000b 00000001 00000000 00000000 ffffffff"},                  // named topology chars
		{"consumer-subscription", "0000 ffffffff"},                                               // topics null
		{"consumer-subscription", "0000 00000001 ffff ffffffff"},                                 // topic null
		{"consumer-assignment", "0000 00000001 0001 74 fffffff0"},                                // partitions
	} {
		t.Run(tc.kind, func(t *testing.T) {
			err := decodeChecked(t, tc.kind, mustHex(t, tc.hex))
			if !errors.Is(err, ErrNegativeLength) {
				t.Fatalf("%s: got %v", tc.hex, err)
			}
		})
	}
}

func TestDecodeErrorNamesOffset(t *testing.T) {
	_, err := DecodeAssignmentInfo(mustHex(t, "00000004 00000004 7fffffff"))
	var de *DecodeError
	if !errors.As(err, &de) || de.Offset != 8 || de.Field != "activeTasks" || !errors.Is(err, ErrLengthTooLarge) {
		t.Fatalf("got %#v", err)
	}
	if want := "decode AssignmentInfo: activeTasks at byte offset 8: length exceeds remaining bytes"; err.Error() != want {
		t.Fatalf("message %q", err.Error())
	}
}
