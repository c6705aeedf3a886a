// Package kafkaframe reads and writes Kafka frames: the request header of
// a key kmsg knows, a request or response encoded as a whole size-prefixed
// frame, a frame read with a bound, and one synchronous exchange. The
// proxy's client and upstream connections and the links between instances
// (proxy/peer) share it; it holds no connection and no state.
//
// A Kafka frame is `int32 size` followed by size bytes. Here "frame" means
// the bytes including the size prefix and "msg" the bytes after it.
package kafkaframe

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// MinRequestSize is api_key + api_version + correlation_id, the fixed
// prefix of every request header version.
const MinRequestSize = 8

var errShortHeader = errors.New("request header truncated")

// FixedHeader reads the fields every request header version holds at fixed
// offsets; opaque forwarding needs nothing else. msg holds at least
// MinRequestSize bytes.
func FixedHeader(msg []byte) (key, version int16, corr int32) {
	return int16(binary.BigEndian.Uint16(msg)), int16(binary.BigEndian.Uint16(msg[2:])), int32(binary.BigEndian.Uint32(msg[4:]))
}

// Header is a fully parsed request header.
type Header struct {
	Key      int16
	Version  int16
	Corr     int32
	ClientID *string
	// BodyAt is the offset of the request body in msg.
	BodyAt int
}

// flexibleFrom[key] is the first flexible (KIP-482) version of a request key, or
// -1 when the key is unknown to kmsg or never flexible.
var flexibleFrom = func() map[int16]int16 {
	m := make(map[int16]int16)
	for k := int16(0); k < 512; k++ {
		req := kmsg.RequestForKey(k)
		if req == nil {
			continue
		}
		m[k] = -1
		for v := int16(0); v <= req.MaxVersion(); v++ {
			req.SetVersion(v)
			if req.IsFlexible() {
				m[k] = v
				break
			}
		}
	}
	return m
}()

// KnownKeys are the request keys kmsg knows, in no order.
func KnownKeys() []int16 {
	keys := make([]int16, 0, len(flexibleFrom))
	for k := range flexibleFrom {
		keys = append(keys, k)
	}
	return keys
}

// RequestFlexible says whether a request of this key and version uses request
// header v2 (and its response header v1). known is false for keys kmsg does not
// know; their headers are never parsed past the fixed prefix.
func RequestFlexible(key, version int16) (flexible, known bool) {
	from, ok := flexibleFrom[key]
	if !ok {
		return false, false
	}
	return from >= 0 && version >= from, true
}

// ParseRequestHeader parses a request header of a key kmsg knows.
func ParseRequestHeader(msg []byte) (Header, error) {
	if len(msg) < MinRequestSize {
		return Header{}, errShortHeader
	}
	var h Header
	h.Key, h.Version, h.Corr = FixedHeader(msg)
	flexible, known := RequestFlexible(h.Key, h.Version)
	if !known {
		return h, fmt.Errorf("api key %d unknown", h.Key)
	}
	h.BodyAt = MinRequestSize
	// Header v0 (no client id) is only used by ControlledShutdown v0.
	if h.Key == int16(kmsg.ControlledShutdown) && h.Version == 0 {
		return h, nil
	}
	r := kbin.Reader{Src: msg[MinRequestSize:]}
	// client_id stays a non-compact nullable string even in header v2.
	h.ClientID = r.NullableString()
	if flexible {
		skipTags(&r)
	}
	if !r.Ok() {
		return h, errShortHeader
	}
	h.BodyAt = len(msg) - len(r.Src)
	return h, nil
}

// skipTags skips a tagged-field section (KIP-482): uvarint count, then per field
// uvarint tag, uvarint size and the bytes.
func skipTags(r *kbin.Reader) {
	for n := r.Uvarint(); n > 0 && r.Ok(); n-- {
		r.Uvarint()
		r.Span(int(r.Uvarint()))
	}
}
