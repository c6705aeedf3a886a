package proxy

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A Kafka frame is `int32 size` followed by size bytes. Throughout this package
// "frame" means the bytes including the size prefix and "msg" the bytes after it.

// minRequestSize is api_key + api_version + correlation_id, the fixed prefix of
// every request header version.
const minRequestSize = 8

var errShortHeader = errors.New("request header truncated")

// frameSize reads the size prefix. It returns -1 for a negative size so the
// caller rejects it with the same check as an oversized one.
func frameSize(b []byte) int {
	n := int32(binary.BigEndian.Uint32(b))
	if n < 0 {
		return -1
	}
	return int(n)
}

// fixedHeader reads the fields every request header version holds at fixed
// offsets; opaque forwarding needs nothing else.
func fixedHeader(msg []byte) (key, version int16, corr int32) {
	return int16(binary.BigEndian.Uint16(msg)), int16(binary.BigEndian.Uint16(msg[2:])), int32(binary.BigEndian.Uint32(msg[4:]))
}

// requestHeader is a fully parsed request header.
type requestHeader struct {
	key      int16
	version  int16
	corr     int32
	clientID *string
	// bodyAt is the offset of the request body in msg.
	bodyAt int
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

// requestFlexible says whether a request of this key and version uses request
// header v2 (and its response header v1). known is false for keys kmsg does not
// know; their headers are never parsed past the fixed prefix.
func requestFlexible(key, version int16) (flexible, known bool) {
	from, ok := flexibleFrom[key]
	if !ok {
		return false, false
	}
	return from >= 0 && version >= from, true
}

// parseRequestHeader parses a request header of a key kmsg knows.
func parseRequestHeader(msg []byte) (requestHeader, error) {
	if len(msg) < minRequestSize {
		return requestHeader{}, errShortHeader
	}
	var h requestHeader
	h.key, h.version, h.corr = fixedHeader(msg)
	flexible, known := requestFlexible(h.key, h.version)
	if !known {
		return h, fmt.Errorf("api key %d unknown", h.key)
	}
	h.bodyAt = minRequestSize
	// Header v0 (no client id) is only used by ControlledShutdown v0.
	if h.key == int16(kmsg.ControlledShutdown) && h.version == 0 {
		return h, nil
	}
	r := kbin.Reader{Src: msg[minRequestSize:]}
	// client_id stays a non-compact nullable string even in header v2.
	h.clientID = r.NullableString()
	if flexible {
		skipTags(&r)
	}
	if !r.Ok() {
		return h, errShortHeader
	}
	h.bodyAt = len(msg) - len(r.Src)
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

// responseBodyAt returns the offset of the body in a response msg: after the
// correlation id and, for flexible versions except ApiVersions (whose response
// header is always v0 so a client can read it before negotiating), the header's
// tagged fields.
func responseBodyAt(msg []byte, key int16, flexible bool) (int, error) {
	if len(msg) < 4 {
		return 0, errors.New("response header truncated")
	}
	if !flexible || key == int16(kmsg.ApiVersions) {
		return 4, nil
	}
	r := kbin.Reader{Src: msg[4:]}
	skipTags(&r)
	if !r.Ok() {
		return 0, errors.New("response header tags truncated")
	}
	return len(msg) - len(r.Src), nil
}

// decodeResponse decodes a response msg of the given key and version with kmsg.
// The result aliases nothing in msg that kmsg copies (strings); byte-slice
// fields may alias msg, so msg must be owned or the result used before msg dies.
func decodeResponse(key, version int16, msg []byte) (kmsg.Response, error) {
	resp := kmsg.ResponseForKey(key)
	if resp == nil {
		return nil, fmt.Errorf("api key %d unknown", key)
	}
	if version < 0 || version > resp.MaxVersion() {
		return nil, fmt.Errorf("%s v%d unknown", kmsg.NameForKey(key), version)
	}
	resp.SetVersion(version)
	at, err := responseBodyAt(msg, key, resp.IsFlexible())
	if err != nil {
		return nil, err
	}
	if err := resp.ReadFrom(msg[at:]); err != nil {
		return nil, fmt.Errorf("decode %s v%d response: %w", kmsg.NameForKey(key), version, err)
	}
	return resp, nil
}

// appendResponseFrame encodes resp (at its own version) as a full frame.
func appendResponseFrame(dst []byte, corr int32, resp kmsg.Response) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(corr))
	if resp.IsFlexible() && resp.Key() != int16(kmsg.ApiVersions) {
		dst = append(dst, 0) // no header tags
	}
	dst = resp.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

// appendRequestFrame encodes req (at its own version) as a full frame with the
// given correlation and client ids.
func appendRequestFrame(dst []byte, corr int32, clientID *string, req kmsg.Request) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = binary.BigEndian.AppendUint16(dst, uint16(req.Key()))
	dst = binary.BigEndian.AppendUint16(dst, uint16(req.GetVersion()))
	dst = binary.BigEndian.AppendUint32(dst, uint32(corr))
	if !(req.Key() == int16(kmsg.ControlledShutdown) && req.GetVersion() == 0) {
		dst = kbin.AppendNullableString(dst, clientID)
		if req.IsFlexible() {
			dst = append(dst, 0)
		}
	}
	dst = req.AppendTo(dst)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

// produceAcks reads the acks field of a Produce request msg. acks=0 requests
// get no response, so they must not take a slot.
func produceAcks(msg []byte) (int16, error) {
	h, err := parseRequestHeader(msg)
	if err != nil {
		return 0, err
	}
	r := kbin.Reader{Src: msg[h.bodyAt:]}
	if h.version >= 3 {
		// transactional_id: compact strings encode length+1 (0 = null).
		if flexible, _ := requestFlexible(h.key, h.version); flexible {
			r.CompactNullableString()
		} else {
			r.NullableString()
		}
	}
	acks := r.Int16()
	if !r.Ok() {
		return 0, errors.New("produce request truncated before acks")
	}
	return acks, nil
}
