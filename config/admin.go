package config

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Admin is the `admin:` section: who may change things through the admin
// listener and what it exposes. The listener's address stays the top-level
// admin-listen (older configurations keep working).
//
//	admin:
//	  auth-token-file: /var/run/secrets/streamshift/admin-token
//	  pprof: false
//	  tls: false
type Admin struct {
	// AuthTokenFile holds the bearer token every request that changes
	// something (any method but GET, HEAD and OPTIONS) and every
	// /debug/pprof/ request must carry; empty: those requests are open.
	// Re-read when the file changes (a rotated Kubernetes Secret).
	AuthTokenFile string `koanf:"auth-token-file"`
	// Pprof serves Go's profiles on /debug/pprof/ (404 when off): they
	// show the command line and the memory of the process.
	Pprof bool `koanf:"pprof"`
	// TLS serves the admin listener over TLS with the listeners'
	// certificate (tls.cert-file and tls.key-file, re-read as theirs are).
	TLS bool `koanf:"tls"`
}

// ReadAdminToken reads a token file: its content without the surrounding
// whitespace (the newline an editor or `echo` adds is not part of it). An
// empty file is an error: a token nobody can present locks nothing.
func ReadAdminToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return "", errors.New(pe.Err.Error())
		}
		return "", err
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", errors.New("the file is empty; put the token in it")
	}
	if strings.ContainsAny(token, "\r\n") {
		return "", errors.New("the token is more than one line")
	}
	return token, nil
}

func (c *Config) validateAdmin() []string {
	var errs []string
	a := c.Admin
	if a.AuthTokenFile != "" {
		if _, err := ReadAdminToken(a.AuthTokenFile); err != nil {
			errs = append(errs, fmt.Sprintf("admin.auth-token-file %q: %v", a.AuthTokenFile, err))
		}
	}
	if a.TLS && !c.TLS.Enabled() {
		errs = append(errs, "admin.tls: needs the listeners' certificate, tls.cert-file and tls.key-file")
	}
	return errs
}
