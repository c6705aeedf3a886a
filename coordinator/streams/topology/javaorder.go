package topology

import (
	"sort"
	"unicode/utf16"
)

// Kafka keeps subtopologies and topic names in java.util.HashMap and
// HashSet, so the order it visits them in, and with it which topic a
// message names first, is the iteration order of those tables. That order
// is deterministic: ascending bucket index of the spread String.hashCode
// in a table of the default capacity (16, doubled while more than 3/4
// full), and insertion order within a bucket. javaHashOrder reproduces it
// so that messages read exactly as Kafka's. (Buckets turn into trees only
// past 8 collisions in a table of at least 64; topologies do not get near.)

// javaStringHash is java.lang.String.hashCode over UTF-16 code units.
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r < 0x10000 {
			h = 31*h + int32(r)
			continue
		}
		hi, lo := utf16.EncodeRune(r)
		h = 31*h + int32(hi)
		h = 31*h + int32(lo)
	}
	return h
}

// javaHashOrder returns keys, distinct and in insertion order, in the
// iteration order of a default java.util.HashMap holding them.
func javaHashOrder(keys []string) []string {
	capacity := 16
	for len(keys) > capacity*3/4 {
		capacity *= 2
	}
	bucket := func(k string) int {
		h := javaStringHash(k)
		h ^= int32(uint32(h) >> 16)
		return int(h) & (capacity - 1)
	}
	out := append([]string(nil), keys...)
	sort.SliceStable(out, func(i, j int) bool { return bucket(out[i]) < bucket(out[j]) })
	return out
}

// distinct drops repeated names, keeping first occurrences in order.
func distinct(names []string) []string {
	seen := make(map[string]bool, len(names))
	out := make([]string, 0, len(names))
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}
