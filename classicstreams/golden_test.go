package classicstreams

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// vector is one golden file written by e2e/vectors (the real Java classes).
type vector struct {
	Name     string          `json:"name"`
	Kind     string          `json:"kind"`
	Producer string          `json:"producer"`
	Hex      string          `json:"hex"`
	Value    json.RawMessage `json:"value"`
	path     string
	bytes    []byte
}

func loadVectors(t testing.TB) []vector {
	t.Helper()
	files, err := filepath.Glob("testdata/vectors-*/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no golden vectors in testdata/vectors-*/ (run make vectors)")
	}
	var out []vector
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v vector
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		v.path = f
		if v.bytes, err = hex.DecodeString(v.Hex); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, v)
	}
	return out
}

// Java writes hash-map order and the descriptions are sorted: compare the
// canonical forms.
func normalizeSubscription(s *SubscriptionInfo)             { *s = s.Canonical() }
func normalizeAssignment(a *AssignmentInfo)                 { *a = a.Canonical() }
func normalizeConsumerSubscription(s *ConsumerSubscription) { *s = s.Canonical() }

// TestGoldenVectors: every vector from the real jars decodes to its
// description and re-encodes to the very same bytes.
func TestGoldenVectors(t *testing.T) {
	kinds := map[string]int{}
	for _, v := range loadVectors(t) {
		kinds[v.Kind]++
		t.Run(filepath.Base(filepath.Dir(v.path))+"/"+v.Name, func(t *testing.T) {
			switch v.Kind {
			case "subscription":
				got, err := DecodeSubscriptionInfo(v.bytes)
				if err != nil {
					t.Fatal(err)
				}
				if !got.Future {
					enc, err := got.Encode()
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(enc, v.bytes) {
						t.Errorf("re-encoded differs:\n got %x\nwant %x", enc, v.bytes)
					}
				}
				var want SubscriptionInfo
				want.LatestSupportedVersion = UnknownVersion
				if err := json.Unmarshal(v.Value, &want); err != nil {
					t.Fatal(err)
				}
				normalizeSubscription(got)
				normalizeSubscription(&want)
				if !reflect.DeepEqual(*got, want) {
					t.Errorf("decoded differs from Java:\n got %+v\nwant %+v", *got, want)
				}
			case "assignment":
				got, err := DecodeAssignmentInfo(v.bytes)
				if err != nil {
					t.Fatal(err)
				}
				enc, err := got.Encode()
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(enc, v.bytes) {
					t.Errorf("re-encoded differs:\n got %x\nwant %x", enc, v.bytes)
				}
				// Without the dictionary hint the bytes may differ only in
				// order: decoding them must give the same value.
				noHint := *got
				noHint.TopicDictionary = nil
				enc2, err := noHint.Encode()
				if err != nil {
					t.Fatal(err)
				}
				again, err := DecodeAssignmentInfo(enc2)
				if err != nil {
					t.Fatal(err)
				}
				var want AssignmentInfo
				if err := json.Unmarshal(v.Value, &want); err != nil {
					t.Fatal(err)
				}
				normalizeAssignment(got)
				normalizeAssignment(again)
				normalizeAssignment(&want)
				if !reflect.DeepEqual(*got, want) {
					t.Errorf("decoded differs from Java:\n got %+v\nwant %+v", *got, want)
				}
				if !reflect.DeepEqual(*again, want) {
					t.Errorf("re-encoded without dictionary hint differs:\n got %+v\nwant %+v", *again, want)
				}
			case "consumer-subscription":
				got, err := DecodeConsumerSubscription(v.bytes)
				if err != nil {
					t.Fatal(err)
				}
				if enc := got.Encode(); !bytes.Equal(enc, v.bytes) {
					t.Errorf("re-encoded differs:\n got %x\nwant %x", enc, v.bytes)
				}
				want := ConsumerSubscription{GenerationID: -1}
				if err := json.Unmarshal(v.Value, &want); err != nil {
					t.Fatal(err)
				}
				normalizeConsumerSubscription(got)
				normalizeConsumerSubscription(&want)
				want.UserDataOffset = got.UserDataOffset
				if !reflect.DeepEqual(*got, want) {
					t.Errorf("decoded differs from Java:\n got %+v\nwant %+v", *got, want)
				}
			case "consumer-assignment":
				got, err := DecodeConsumerAssignment(v.bytes)
				if err != nil {
					t.Fatal(err)
				}
				if enc := got.Encode(); !bytes.Equal(enc, v.bytes) {
					t.Errorf("re-encoded differs:\n got %x\nwant %x", enc, v.bytes)
				}
				var want ConsumerAssignment
				if err := json.Unmarshal(v.Value, &want); err != nil {
					t.Fatal(err)
				}
				*got = got.Canonical()
				want = want.Canonical()
				want.UserDataOffset = got.UserDataOffset
				if !reflect.DeepEqual(*got, want) {
					t.Errorf("decoded differs from Java:\n got %+v\nwant %+v", *got, want)
				}
			default:
				t.Fatalf("unknown kind %q", v.Kind)
			}
		})
	}
	for _, k := range []string{"subscription", "assignment", "consumer-subscription", "consumer-assignment"} {
		if kinds[k] == 0 {
			t.Errorf("no golden vector of kind %s", k)
		}
	}
}

// TestGoldenVersionsPerJar: each jar's directory holds every version that
// jar writes, from the first up to its highest (kafka-streams 2.8.2 stops at
// SubscriptionInfo/AssignmentInfo v9 and ConsumerProtocol v1), and the
// directories of the jars streamshift's README names are all there.
func TestGoldenVersionsPerJar(t *testing.T) {
	type kv struct{ dir, kind string }
	seen := map[kv]map[int32]bool{}
	for _, v := range loadVectors(t) {
		var hdr struct {
			Version int32 `json:"version"`
			Future  bool  `json:"future"`
		}
		if err := json.Unmarshal(v.Value, &hdr); err != nil {
			t.Fatal(err)
		}
		if hdr.Future {
			continue // the hand-written header from a future member
		}
		k := kv{filepath.Base(filepath.Dir(v.path)), v.Kind}
		if seen[k] == nil {
			seen[k] = map[int32]bool{}
		}
		seen[k][hdr.Version] = true
	}
	want := map[string]struct{ streams, consumer int32 }{
		"vectors-2.8.2": {9, 1}, "vectors-3.6.2": {11, 3}, "vectors-3.9.2": {11, 3}, "vectors-4.4.0": {11, 3},
	}
	for dir, hi := range want {
		for kind, r := range map[string][2]int32{"subscription": {1, hi.streams}, "assignment": {1, hi.streams},
			"consumer-subscription": {0, hi.consumer}, "consumer-assignment": {0, hi.consumer}} {
			got := seen[kv{dir, kind}]
			for ver := r[0]; ver <= r[1]; ver++ {
				if !got[ver] {
					t.Errorf("%s: %s v%d has no golden vector", dir, kind, ver)
				}
			}
			for ver := range got {
				if ver > r[1] {
					t.Errorf("%s: %s v%d is above what that jar writes (v%d)", dir, kind, ver, r[1])
				}
			}
		}
	}
}

// TestGoldenVersionsCovered: the golden set holds every version.
func TestGoldenVersionsCovered(t *testing.T) {
	seen := map[string]map[int32]bool{"subscription": {}, "assignment": {}, "consumer-subscription": {}, "consumer-assignment": {}}
	for _, v := range loadVectors(t) {
		var hdr struct {
			Version int32 `json:"version"`
		}
		if err := json.Unmarshal(v.Value, &hdr); err != nil {
			t.Fatal(err)
		}
		seen[v.Kind][hdr.Version] = true
	}
	check := func(kind string, lo, hi int32) {
		for ver := lo; ver <= hi; ver++ {
			if !seen[kind][ver] {
				t.Errorf("%s v%d has no golden vector", kind, ver)
			}
		}
	}
	check("subscription", 1, 12)
	check("assignment", 1, 11)
	check("consumer-subscription", 0, 3)
	check("consumer-assignment", 0, 3)
}
