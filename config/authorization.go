package config

import (
	"fmt"
	"time"
)

// Authorization is how streamshift applies the broker's ACLs to the
// requests it serves itself: it asks the broker on the client's own
// connection (route/authorize.go) and reuses the answer for a while.
type Authorization struct {
	// CacheTTL is how long an answer for one principal (or, where
	// streamshift cannot tell it, one client connection), resource and
	// operation is reused; 0 asks the broker on every request. An ACL
	// change reaches served requests within it.
	CacheTTL time.Duration `koanf:"cache-ttl"`
	// PerConnection keeps answers per client connection even where
	// streamshift reads the principal from the SASL exchange: for a broker
	// whose principal.builder.class does not make User:<SASL user> of
	// every PLAIN and SCRAM connection (proxy/sasl_principal.go).
	PerConnection bool `koanf:"per-connection"`
}

// DefaultAuthorization: twice the streams heartbeat interval's default
// (5s), so a steady member asks about once every other heartbeat.
func DefaultAuthorization() Authorization {
	return Authorization{CacheTTL: 10 * time.Second}
}

func (a Authorization) validate() []string {
	if a.CacheTTL < 0 {
		return []string{fmt.Sprintf("authorization.cache-ttl: must not be negative, got %v", a.CacheTTL)}
	}
	return nil
}
