package kafkaframe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Size reads the size prefix. It returns -1 for a negative size so the
// caller rejects it with the same check as an oversized one.
func Size(b []byte) int {
	n := int32(binary.BigEndian.Uint32(b))
	if n < 0 {
		return -1
	}
	return int(n)
}

// Read reads one frame and returns it without its size prefix. A frame
// beyond max (limits.max-frame-bytes) is refused from its size prefix,
// before it is allocated or waited for.
func Read(r io.Reader, max int) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := Size(size[:])
	if n > max {
		return nil, fmt.Errorf("frame of %d bytes beyond the limit of %d (limits.max-frame-bytes)", n, max)
	}
	if n < 4 {
		return nil, fmt.Errorf("invalid frame size %d (under 4 bytes or beyond 2 GiB)", n)
	}
	msg := make([]byte, n)
	if _, err := io.ReadFull(r, msg); err != nil {
		return nil, err
	}
	return msg, nil
}

// ResponseBodyAt returns the offset of the body in a response msg: after the
// correlation id and, for flexible versions except ApiVersions (whose response
// header is always v0 so a client can read it before negotiating), the header's
// tagged fields.
func ResponseBodyAt(msg []byte, key int16, flexible bool) (int, error) {
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

// DecodeResponse decodes a response msg of the given key and version with kmsg.
// The result aliases nothing in msg that kmsg copies (strings); byte-slice
// fields may alias msg, so msg must be owned or the result used before msg dies.
func DecodeResponse(key, version int16, msg []byte) (kmsg.Response, error) {
	resp := kmsg.ResponseForKey(key)
	if resp == nil {
		return nil, fmt.Errorf("api key %d unknown", key)
	}
	if version < 0 || version > resp.MaxVersion() {
		return nil, fmt.Errorf("%s v%d unknown", kmsg.NameForKey(key), version)
	}
	resp.SetVersion(version)
	at, err := ResponseBodyAt(msg, key, resp.IsFlexible())
	if err != nil {
		return nil, err
	}
	if err := resp.ReadFrom(msg[at:]); err != nil {
		return nil, fmt.Errorf("decode %s v%d response: %w", kmsg.NameForKey(key), version, err)
	}
	return resp, nil
}

// AppendResponse encodes resp (at its own version) as a full frame.
func AppendResponse(dst []byte, corr int32, resp kmsg.Response) []byte {
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

// AppendRequest encodes req (at its own version) as a full frame with the
// given correlation and client ids: request header v2 for a flexible
// version, v1 otherwise (v0 for ControlledShutdown v0).
func AppendRequest(dst []byte, corr int32, clientID *string, req kmsg.Request) []byte {
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

// RoundTrip writes req on rw with correlation id corr and reads its
// answer, a frame of at most maxFrame bytes: one exchange at a time (what
// brings a connection up: ApiVersions, SASL).
func RoundTrip(rw io.ReadWriter, corr int32, clientID *string, req kmsg.Request, maxFrame int) (kmsg.Response, error) {
	if _, err := rw.Write(AppendRequest(nil, corr, clientID, req)); err != nil {
		return nil, err
	}
	msg, err := Read(rw, maxFrame)
	if err != nil {
		return nil, err
	}
	if got := int32(binary.BigEndian.Uint32(msg)); got != corr {
		return nil, fmt.Errorf("%s answer of correlation id %d, want %d", kmsg.NameForKey(req.Key()), got, corr)
	}
	return DecodeResponse(req.Key(), req.GetVersion(), msg)
}
