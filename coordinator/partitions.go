package coordinator

import "unicode/utf16"

// PartitionFor is the partition of the group log (of n partitions) that
// holds group id: Kafka's own rule for __consumer_offsets,
// Utils.abs(groupId.hashCode()) % n, with Java's String.hashCode over the
// id's UTF-16 code units and Utils.abs mapping Integer.MIN_VALUE to 0. The
// rule is Kafka's so it is documented outside streamshift and stable across
// releases: every instance, of every version, places a group on the same
// partition. n < 1 counts as 1.
func PartitionFor(groupID string, n int32) int32 {
	if n <= 1 {
		return 0
	}
	h := javaStringHash(groupID)
	if h == -1<<31 {
		return 0
	}
	if h < 0 {
		h = -h
	}
	return h % n
}

// javaStringHash is java.lang.String.hashCode: s[0]*31^(n-1) + ... + s[n-1]
// over UTF-16 code units, in int32 arithmetic (wrapping). Bytes that are
// not UTF-8 count as U+FFFD each (Java's decoder may fold a malformed
// sequence into fewer; Kafka clients send UTF-8).
func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			h = 31*h + hi
			h = 31*h + lo
			continue
		}
		h = 31*h + r
	}
	return h
}
