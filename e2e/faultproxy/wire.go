package faultproxy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxFrame bounds one request or response: the e2e's are far below it, and a
// length past it is a broken stream, not a message to buffer.
const maxFrame = 256 << 20

// readFrame reads one size-prefixed Kafka message (the size not included).
func readFrame(r io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 0 || n > maxFrame {
		return nil, fmt.Errorf("frame of %d bytes", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	return b, nil
}

// writeFrame writes msg with its size prefix.
func writeFrame(w io.Writer, msg []byte) error {
	b := make([]byte, 4, 4+len(msg))
	binary.BigEndian.PutUint32(b, uint32(len(msg)))
	_, err := w.Write(append(b, msg...))
	return err
}

// header is a request's header (request header v1 or v2) and, when kmsg
// knows the key and version, its decoded body.
type header struct {
	key      int16
	version  int16
	corr     int32
	clientID string
	// req is the decoded body; nil when kmsg does not know the key, or the
	// body did not decode (the request is then only forwarded).
	req kmsg.Request
	// flexible: the response carries header v1 (tagged fields), except
	// ApiVersions, whose response header is always v0.
	flexible bool
}

var errShort = errors.New("request shorter than its header")

// parseRequest reads the header and, where kmsg can, the body of one request
// frame. An unknown key or a body kmsg cannot read is not an error: such a
// request is forwarded untouched.
func parseRequest(b []byte) (header, error) {
	var h header
	if len(b) < 10 {
		return h, errShort
	}
	h.key = int16(binary.BigEndian.Uint16(b))
	h.version = int16(binary.BigEndian.Uint16(b[2:]))
	h.corr = int32(binary.BigEndian.Uint32(b[4:]))
	n := int(int16(binary.BigEndian.Uint16(b[8:])))
	rest := b[10:]
	if n > 0 {
		if len(rest) < n {
			return h, errShort
		}
		h.clientID, rest = string(rest[:n]), rest[n:]
	}
	req := kmsg.RequestForKey(h.key)
	if req == nil {
		return h, nil
	}
	req.SetVersion(h.version)
	h.flexible = req.IsFlexible() && h.key != 18
	if req.IsFlexible() {
		// Request header v2: tagged fields after the client id.
		var err error
		if rest, err = skipTags(rest); err != nil {
			return h, nil
		}
	}
	if h.version <= req.MaxVersion() && req.ReadFrom(rest) == nil {
		h.req = req
	}
	return h, nil
}

// skipTags skips a tagged-field section (KIP-482).
func skipTags(b []byte) ([]byte, error) {
	n, l := binary.Uvarint(b)
	if l <= 0 {
		return nil, errShort
	}
	b = b[l:]
	for range n {
		_, l := binary.Uvarint(b) // tag
		if l <= 0 {
			return nil, errShort
		}
		b = b[l:]
		size, l := binary.Uvarint(b)
		if l <= 0 || uint64(len(b)-l) < size {
			return nil, errShort
		}
		b = b[l+int(size):]
	}
	return b, nil
}

// responseBody splits a response frame into its correlation id and body,
// given whether its header is v1 (flexible, one empty tag section).
func responseBody(b []byte, flexible bool) (int32, []byte, error) {
	if len(b) < 4 {
		return 0, nil, errShort
	}
	corr := int32(binary.BigEndian.Uint32(b))
	body := b[4:]
	if flexible {
		var err error
		if body, err = skipTags(body); err != nil {
			return corr, nil, err
		}
	}
	return corr, body, nil
}

// responseFrame is a response's frame (without the size): its header, v0 or
// v1, then the body kmsg encodes.
func responseFrame(corr int32, flexible bool, resp kmsg.Response) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(corr))
	if flexible {
		b = append(b, 0) // no tagged fields
	}
	return resp.AppendTo(b)
}
