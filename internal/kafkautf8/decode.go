// Package kafkautf8 reads a protocol string as Kafka does. Kafka decodes
// every string of a request with Java's new String(bytes, UTF_8), which
// never fails: bytes that are not UTF-8 become U+FFFD, so a broker never
// holds a group id, member id or topic name that is not valid UTF-8.
// kmsg keeps the bytes as they came; streamshift decodes them here where
// it takes a request in, so that what it logs, counts, captures, shows and
// writes to its group log is what Kafka would hold.
// It owns the decoding only and imports nothing of the project.
package kafkautf8

import (
	"strings"
	"unicode/utf8"
)

// Decode is s as Java decodes its bytes: s itself when it is valid UTF-8,
// otherwise each ill-formed sequence replaced by one U+FFFD where Java puts
// one. Java is not Go's strings.ToValidUTF8 (one U+FFFD per run of bad
// bytes): it replaces a lead byte and the continuation bytes it accepted
// so far as one, a byte it could not start with alone, an encoded UTF-16
// surrogate (ED A0..BF xx) as one for its three bytes, and drops the
// rest of a sequence cut short by the end of the input
// (testdata/java17.txt holds what Java 17 gives for a thousand inputs).
func Decode(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	const repl = "\uFFFD"
	var b strings.Builder
	b.Grow(len(s) + 8)
	cont := func(i int) bool { return i < len(s) && s[i]&0xC0 == 0x80 }
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c < 0x80:
			b.WriteByte(c)
			i++
		case c >= 0xC2 && c <= 0xDF: // two bytes
			if i+1 >= len(s) {
				b.WriteString(repl)
				return b.String()
			}
			if !cont(i + 1) {
				b.WriteString(repl)
				i++
				continue
			}
			b.WriteString(s[i : i+2])
			i += 2
		case c >= 0xE0 && c <= 0xEF: // three bytes
			// The second byte a lead accepts: E0 needs A0..BF (no
			// overlong form); ED A0..BF (a surrogate) is refused only
			// once the whole sequence is read.
			second := cont(i+1) && (c != 0xE0 || s[i+1] >= 0xA0)
			switch {
			case i+2 < len(s):
				if !second || !cont(i+2) {
					b.WriteString(repl)
					i++
					if second {
						i++
					}
					continue
				}
				if c == 0xED && s[i+1] >= 0xA0 {
					b.WriteString(repl) // a UTF-16 surrogate, one for three bytes
				} else {
					b.WriteString(s[i : i+3])
				}
				i += 3
			case i+1 < len(s) && !second:
				b.WriteString(repl)
				i++
			default: // cut short by the end
				b.WriteString(repl)
				return b.String()
			}
		case c >= 0xF0 && c <= 0xF7: // four bytes
			// The second byte a lead accepts: F0 needs 90..BF (no
			// overlong form), F4 needs 80..8F (at most U+10FFFF), F5..F7
			// none.
			second := c <= 0xF4 && cont(i+1) && (c != 0xF0 || s[i+1] >= 0x90) && (c != 0xF4 || s[i+1] <= 0x8F)
			if i+3 < len(s) {
				if second && cont(i+2) && cont(i+3) {
					b.WriteString(s[i : i+4])
					i += 4
					continue
				}
				b.WriteString(repl)
				switch {
				case !second:
					i++
				case !cont(i + 2):
					i += 2
				default:
					i += 3
				}
				continue
			}
			if c > 0xF4 || (i+1 < len(s) && !second) {
				b.WriteString(repl)
				i++
				continue
			}
			b.WriteString(repl)
			i += 2
			if i < len(s) && !cont(i) {
				continue
			}
			return b.String() // cut short by the end
		default: // a continuation byte, C0, C1, F8..FF: never a lead
			b.WriteString(repl)
			i++
		}
	}
	return b.String()
}
