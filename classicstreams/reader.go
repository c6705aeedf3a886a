package classicstreams

import (
	"encoding/binary"
	"unicode/utf16"
	"unicode/utf8"
)

// reader walks a payload big-endian, remembering the first failure with its
// offset. After a failure every read returns a zero value, so decoders check
// r.err only where a loop or an allocation depends on what was read.
type reader struct {
	src     []byte
	off     int
	payload string
	err     *DecodeError
}

func (r *reader) remaining() int { return len(r.src) - r.off }

func (r *reader) failAt(off int, field string, err error) {
	if r.err == nil {
		r.err = &DecodeError{Payload: r.payload, Field: field, Offset: off, Err: err}
	}
}

func (r *reader) need(field string, n int) bool {
	if r.err != nil {
		return false
	}
	if r.remaining() < n {
		r.failAt(r.off, field, ErrTruncated)
		return false
	}
	return true
}

// fixed reads the next n bytes of a fixed-size field, or returns nil after
// recording a truncation.
func (r *reader) fixed(field string, n int) []byte {
	if !r.need(field, n) {
		return nil
	}
	b := r.src[r.off : r.off+n]
	r.off += n
	return b
}

func (r *reader) int8(field string) int8 {
	if b := r.fixed(field, 1); b != nil {
		return int8(b[0])
	}
	return 0
}

func (r *reader) int16(field string) int16 {
	if b := r.fixed(field, 2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *reader) int32(field string) int32 {
	if b := r.fixed(field, 4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *reader) int64(field string) int64 {
	if b := r.fixed(field, 8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (r *reader) uuid(field string) (id ProcessID) {
	copy(id[:], r.fixed(field, 16))
	return id
}

// count reads an int32 element count and checks that count elements of at
// least minSize bytes each fit in what remains, so a caller may allocate
// count elements. With nullable, -1 is null (reported as -1).
func (r *reader) count(field string, minSize int, nullable bool) int {
	start := r.off
	n := r.int32(field)
	if r.err != nil {
		return 0
	}
	if n < 0 {
		if nullable && n == -1 {
			return -1
		}
		r.failAt(start, field, ErrNegativeLength)
		return 0
	}
	if int64(n)*int64(minSize) > int64(r.remaining()) {
		r.failAt(start, field, ErrLengthTooLarge)
		return 0
	}
	return int(n)
}

// span reads length bytes after a prefix already read at start.
func (r *reader) span(start int, field string, n int) []byte {
	if n > r.remaining() {
		r.failAt(start, field, ErrLengthTooLarge)
		return nil
	}
	b := r.src[r.off : r.off+n : r.off+n]
	r.off += n
	return b
}

// string16 reads a generated-protocol string: int16 length and UTF-8 bytes.
// ok is false for null (length -1), which only nullable fields accept.
func (r *reader) string16(field string, nullable bool) (s string, ok bool) {
	start := r.off
	n := r.int16(field)
	if r.err != nil {
		return "", false
	}
	if n < 0 {
		if nullable && n == -1 {
			return "", false
		}
		r.failAt(start, field, ErrNegativeLength)
		return "", false
	}
	b := r.span(start, field, int(n))
	if r.err != nil {
		return "", false
	}
	return string(b), true
}

// bytes32 reads generated-protocol bytes: int32 length and data (aliasing
// the input). Null (-1) is returned as nil when nullable.
func (r *reader) bytes32(field string, nullable bool) []byte {
	start := r.off
	n := r.int32(field)
	if r.err != nil {
		return nil
	}
	if n < 0 {
		if !(nullable && n == -1) {
			r.failAt(start, field, ErrNegativeLength)
		}
		return nil
	}
	b := r.span(start, field, int(n))
	if b == nil && r.err == nil {
		b = r.src[r.off:r.off:r.off] // empty but not null
	}
	return b
}

// utf reads Java's DataOutput.writeUTF: uint16 length and modified UTF-8.
func (r *reader) utf(field string) string {
	start := r.off
	if !r.need(field, 2) {
		return ""
	}
	n := int(binary.BigEndian.Uint16(r.src[r.off:]))
	r.off += 2
	b := r.span(start, field, n)
	if r.err != nil {
		return ""
	}
	for _, c := range b {
		if c == 0 || c >= 0x80 {
			s, ok := decodeModifiedUTF8(b)
			if !ok {
				r.failAt(start, field, ErrBadString)
			}
			return s
		}
	}
	return string(b)
}

// chars reads Kafka Streams' named-topology encoding: an int32 count of
// UTF-16 code units, each written with DataOutput.writeChar.
func (r *reader) chars(field string) string {
	start := r.off
	n := r.int32(field)
	if r.err != nil {
		return ""
	}
	if n < 0 {
		r.failAt(start, field, ErrNegativeLength)
		return ""
	}
	if n == 0 {
		return ""
	}
	b := r.span(start, field, int(n)*2)
	if r.err != nil {
		return ""
	}
	units := make([]uint16, n)
	for i := range units {
		units[i] = binary.BigEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(units))
}

// decodeModifiedUTF8 decodes what DataInputStream.readUTF accepts: one-,
// two- and three-byte forms of UTF-16 code units; surrogate pairs combine,
// lone surrogates become U+FFFD.
func decodeModifiedUTF8(b []byte) (string, bool) {
	units := make([]uint16, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c < 0x80:
			units = append(units, uint16(c))
			i++
		case c>>5 == 0x6:
			if i+1 >= len(b) || b[i+1]>>6 != 0x2 {
				return "", false
			}
			units = append(units, uint16(c&0x1f)<<6|uint16(b[i+1]&0x3f))
			i += 2
		case c>>4 == 0xe:
			if i+2 >= len(b) || b[i+1]>>6 != 0x2 || b[i+2]>>6 != 0x2 {
				return "", false
			}
			units = append(units, uint16(c&0x0f)<<12|uint16(b[i+1]&0x3f)<<6|uint16(b[i+2]&0x3f))
			i += 3
		default:
			return "", false
		}
	}
	return string(utf16.Decode(units)), true
}

// modifiedUTF8Len is the length writeUTF gives s; Go strings that are not
// valid UTF-8 are written with U+FFFD for each bad byte.
func modifiedUTF8Len(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == 0 || c >= 0x80 {
			goto slow
		}
		n++
	}
	return n
slow:
	n = 0
	for _, c := range s {
		switch {
		case c == 0:
			n += 2
		case c < 0x80:
			n++
		case c < 0x800:
			n += 2
		case c < 0x10000:
			n += 3
		default:
			n += 6 // a surrogate pair, three bytes each
		}
	}
	return n
}

func appendModifiedUTF8(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == 0 || c >= 0x80 {
			goto slow
		}
	}
	return append(dst, s...)
slow:
	for _, c := range s {
		switch {
		case c == 0:
			dst = append(dst, 0xc0, 0x80)
		case c < 0x80:
			dst = append(dst, byte(c))
		case c < 0x800:
			dst = append(dst, 0xc0|byte(c>>6), 0x80|byte(c&0x3f))
		case c < 0x10000:
			dst = append(dst, 0xe0|byte(c>>12), 0x80|byte(c>>6&0x3f), 0x80|byte(c&0x3f))
		default:
			hi, lo := utf16.EncodeRune(c)
			dst = appendModifiedUTF8Unit(dst, uint16(hi))
			dst = appendModifiedUTF8Unit(dst, uint16(lo))
		}
	}
	return dst
}

func appendModifiedUTF8Unit(dst []byte, u uint16) []byte {
	return append(dst, 0xe0|byte(u>>12), 0x80|byte(u>>6&0x3f), 0x80|byte(u&0x3f))
}

// utf16Len is the number of UTF-16 code units of s, which is what Java's
// String.length() counts.
func utf16Len(s string) int {
	n := 0
	for _, c := range s {
		if c >= 0x10000 && c <= utf8.MaxRune {
			n += 2
		} else {
			n++
		}
	}
	return n
}
