package classicstreams

import (
	"encoding/binary"
	"unicode/utf16"
)

func appendInt16(dst []byte, v int16) []byte {
	return binary.BigEndian.AppendUint16(dst, uint16(v))
}

func appendInt32(dst []byte, v int32) []byte {
	return binary.BigEndian.AppendUint32(dst, uint32(v))
}

func appendInt64(dst []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(v))
}

// appendUTF writes Java's DataOutput.writeUTF; the caller has checked that
// the encoded length fits in 16 bits. Plain ASCII (no NUL) is one scan.
func appendUTF(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == 0 || c >= 0x80 {
			dst = binary.BigEndian.AppendUint16(dst, uint16(modifiedUTF8Len(s)))
			return appendModifiedUTF8(dst, s)
		}
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(s)))
	return append(dst, s...)
}

// appendChars writes a named topology as Kafka Streams does in AssignmentInfo:
// int32 count of UTF-16 code units, then each unit big-endian.
func appendChars(dst []byte, s string) []byte {
	dst = appendInt32(dst, int32(utf16Len(s)))
	for _, c := range s {
		if c >= 0x10000 {
			hi, lo := utf16.EncodeRune(c)
			dst = binary.BigEndian.AppendUint16(dst, uint16(hi))
			dst = binary.BigEndian.AppendUint16(dst, uint16(lo))
			continue
		}
		dst = binary.BigEndian.AppendUint16(dst, uint16(c))
	}
	return dst
}

// appendArray writes a Java collection as Kafka Streams does: an int32
// count, then each element.
func appendArray[T any](dst []byte, xs []T, each func([]byte, T) []byte) []byte {
	dst = appendInt32(dst, int32(len(xs)))
	for _, x := range xs {
		dst = each(dst, x)
	}
	return dst
}

// appendBytes32 writes an int32 length, then the bytes.
func appendBytes32(dst []byte, s string) []byte {
	return append(appendInt32(dst, int32(len(s))), s...)
}
