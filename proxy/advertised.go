package proxy

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A request whose key or version streamshift did not advertise to its
// client is never forwarded: the broker behind may not know the key (a
// fake or older broker can fail on it), and a version outside what the
// proxy can decode might carry addresses it cannot rewrite. Kafka closes
// such a connection; so does the proxy (clientConn.handleRequest).

// apiTable is the version range of every key one ApiVersions answer gave,
// indexed by key; a key it lacks has min > max. Tables are shared between
// connections and never change.
type apiTable []versionRange

type versionRange struct{ min, max int16 }

func (t apiTable) allows(key, version int16) bool {
	if key < 0 || int(key) >= len(t) {
		return false
	}
	r := t[key]
	return version >= r.min && version <= r.max
}

// defaultAPITable holds for a connection that has not asked ApiVersions
// (clients may skip it): every key kmsg knows, up to the version the proxy
// accepts of it (versionCap).
var defaultAPITable = func() apiTable {
	top := int16(0)
	for k := range versionCaps {
		top = max(top, k)
	}
	t := make(apiTable, top+1)
	for i := range t {
		t[i] = versionRange{min: 0, max: -1}
	}
	for k, v := range versionCaps {
		t[k] = versionRange{min: 0, max: v}
	}
	return t
}()

// newAPITable is the table of an ApiVersions answer's keys.
func newAPITable(keys []kmsg.ApiVersionsResponseApiKey) apiTable {
	top := int16(-1)
	for _, k := range keys {
		top = max(top, k.ApiKey)
	}
	t := make(apiTable, int(top)+1)
	for i := range t {
		t[i] = versionRange{min: 0, max: -1}
	}
	for _, k := range keys {
		if k.ApiKey >= 0 {
			t[k.ApiKey] = versionRange{min: k.MinVersion, max: k.MaxVersion}
		}
	}
	return t
}

// advertised reports whether cc's client was told it may send key at
// version: by the last ApiVersions answer it got, or the default table.
func (cc *clientConn) advertised(key, version int16) bool {
	if cc.adv == nil {
		return defaultAPITable.allows(key, version)
	}
	return (*cc.adv).allows(key, version)
}

// setAdvertised records what an ApiVersions answer told cc's client. Every
// connection to one cluster gets the same answer, so the table is shared
// with the previous one when equal: an idle connection holds a pointer.
func (cc *clientConn) setAdvertised(t apiTable) {
	p := cc.p
	if last := p.lastAdv.Load(); last != nil && slices.Equal(*last, t) {
		cc.adv = last
		return
	}
	p.lastAdv.Store(&t)
	cc.adv = &t
}

// rejectUnadvertised closes the connection over a request of a key or
// version its client was not told of, with one log line per interval.
func (cc *clientConn) rejectUnadvertised(key, version int16) {
	p := cc.p
	p.m.frameRejected.WithLabelValues("unadvertised api key or version").Inc()
	if ok, held := p.unadvertisedLog.Allow(p.clock.Load()); ok {
		p.log.Warn().Uint64("conn", cc.id).Str("remote", cc.remote).Int16("api_key", key).Str("api", kmsg.NameForKey(key)).
			Int16("version", version).Bool("after_api_versions", cc.adv != nil).Int64("more_since_last_line", held).
			Msg("request of an api key or version not advertised to the client; closing the connection, as Kafka does")
	}
	cc.reason = "bad request: api key or version not advertised"
}
