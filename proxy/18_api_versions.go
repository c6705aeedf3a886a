package proxy

import (
	"slices"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/internal/kafkaframe"
)

// fetchMaxVersion caps Fetch below v16, the version that added KIP-951
// NodeEndpoints, so Fetch responses, by far the largest on the wire, are never
// decoded: with v15 a client learns a new leader from Metadata as before
// KIP-951, and v16-v18 add nothing else a consumer uses (v17: replica directory
// id for followers, v18: high watermark for followers).
const fetchMaxVersion = 15

// maxApiVersions is the highest ApiVersions request version the proxy can
// decode a response of; a newer request gets a local UNSUPPORTED_VERSION.
var maxApiVersions = kmsg.NewPtrApiVersionsRequest().MaxVersion()

// versionCaps[key] is the highest version of key the proxy advertises and
// accepts: kmsg's maximum (the proxy must be able to decode anything it
// rewrites or intercepts, and a newer version might carry addresses), lower for
// Fetch. Keys kmsg does not know are absent and not advertised at all.
var versionCaps = func() map[int16]int16 {
	m := make(map[int16]int16)
	for k := int16(0); k < 512; k++ {
		if req := kmsg.RequestForKey(k); req != nil {
			m[k] = req.MaxVersion()
		}
	}
	m[int16(kmsg.Fetch)] = fetchMaxVersion
	return m
}()

func versionCap(key int16) (max int16, ok bool) {
	max, ok = versionCaps[key]
	return max, ok
}

// unsupportedApiVersions is Kafka's answer to an ApiVersions request newer than
// it knows: a v0 body (the only layout every client can read) with
// UNSUPPORTED_VERSION and just the ApiVersions range, so the client retries at
// a version both sides speak.
func unsupportedApiVersions(corr int32) []byte {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 0
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: int16(kmsg.ApiVersions), MinVersion: 0, MaxVersion: maxApiVersions}}
	return kafkaframe.AppendResponse(nil, corr, resp)
}

// isUnsupportedVersionReply detects a broker's own error-35 ApiVersions reply
// (a v0 body whatever the request version): ErrorCode is the first body field
// in every version, right after the v0 response header.
func isUnsupportedVersionReply(frame []byte) bool {
	return len(frame) >= 10 && int16(uint16(frame[8])<<8|uint16(frame[9])) == kerr.UnsupportedVersion.Code
}

// rewriteApiVersions rewrites a successful ApiVersions response: every key is
// capped to versionCap, keys kmsg does not know are removed (they could carry
// addresses the proxy cannot rewrite), locally served keys are merged in,
// and the intercepted keys are capped to what every instance of the cluster
// serves (caps, nil without). It returns nil when the frame must pass
// through untouched; otherwise adv is what the answer advertises, the only
// keys and versions the client may send afterwards (advertised.go).
func rewriteApiVersions(regs []*registration, caps map[int16]int16, version int16, frame []byte) (out []byte, adv apiTable, err error) {
	if isUnsupportedVersionReply(frame) {
		return nil, nil, nil
	}
	r, err := kafkaframe.DecodeResponse(int16(kmsg.ApiVersions), version, frame[4:])
	if err != nil {
		return nil, nil, err
	}
	resp := r.(*kmsg.ApiVersionsResponse)
	if resp.ErrorCode != 0 {
		return nil, nil, nil
	}
	capApiVersions(resp, regs, caps)
	corr := int32(uint32(frame[4])<<24 | uint32(frame[5])<<16 | uint32(frame[6])<<8 | uint32(frame[7]))
	return kafkaframe.AppendResponse(make([]byte, 0, len(frame)+64), corr, resp), newAPITable(resp.ApiKeys), nil
}

// capApiVersions applies the proxy's view to the broker's key list in place.
// A registered, advertised key gets the union of the broker's range and the
// registered one: versions inside the registered range are served or decided
// by the interceptor, the others forwarded to a broker that supports them. A
// capped registration's maxVersion then bounds the key's range, and so does
// caps[key], the highest version every instance of the cluster serves (a
// request may be carried to its group's owner, which must decode it;
// SetClusterVersions).
func capApiVersions(resp *kmsg.ApiVersionsResponse, regs []*registration, caps map[int16]int16) {
	keys := resp.ApiKeys[:0]
	seen := make(map[int16]int, len(resp.ApiKeys))
	for _, k := range resp.ApiKeys {
		top, ok := versionCap(k.ApiKey)
		if !ok {
			continue
		}
		if k.MaxVersion > top {
			k.MaxVersion = top
		}
		if k.ApiKey == int16(kmsg.SASLHandshake) && k.MinVersion < 1 {
			k.MinVersion = 1 // see clientConn.handleRequest
		}
		if k.MinVersion > k.MaxVersion {
			continue
		}
		seen[k.ApiKey] = len(keys)
		keys = append(keys, k)
	}
	for _, reg := range regs {
		if i, ok := seen[reg.key]; ok {
			k := &keys[i]
			if reg.advertise {
				k.MinVersion = min(k.MinVersion, reg.minVersion)
				k.MaxVersion = max(k.MaxVersion, reg.maxVersion)
			}
			if reg.capped {
				k.MaxVersion = min(k.MaxVersion, reg.maxVersion)
			}
			continue
		}
		if reg.advertise {
			keys = append(keys, kmsg.ApiVersionsResponseApiKey{ApiKey: reg.key, MinVersion: reg.minVersion, MaxVersion: reg.maxVersion})
		}
	}
	for i := range keys {
		if c, ok := caps[keys[i].ApiKey]; ok && c < keys[i].MaxVersion {
			keys[i].MaxVersion = c
		}
	}
	// A cap can leave a key with no version (MinVersion > MaxVersion).
	keys = slices.DeleteFunc(keys, func(k kmsg.ApiVersionsResponseApiKey) bool { return k.MinVersion > k.MaxVersion })
	sort.Slice(keys, func(i, j int) bool { return keys[i].ApiKey < keys[j].ApiKey })
	resp.ApiKeys = keys
}
