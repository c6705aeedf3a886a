package config

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAdminTokenFile: the token is the file's content without surrounding
// whitespace; an empty, missing or multi-line file stops the start with a
// line naming the key and where it was set.
func TestAdminTokenFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", "  s3cret\n")
	cfg, _, err := Load([]string{"--upstream", "a:1", "--admin-auth-token-file", good}, nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if tok, err := ReadAdminToken(cfg.Admin.AuthTokenFile); err != nil || tok != "s3cret" {
		t.Errorf("token %q, %v", tok, err)
	}
	empty, two := write("empty", " \n"), write("two", "a\nb\n")
	for _, tc := range []struct {
		args, env []string
		want      string
	}{
		{[]string{"--admin-auth-token-file", empty}, nil, `admin.auth-token-file "` + empty + `": the file is empty; put the token in it (from --admin-auth-token-file)`},
		{nil, []string{"STREAMSHIFT_ADMIN_AUTH_TOKEN_FILE=" + empty + ".none"}, `admin.auth-token-file "` + empty + `.none": no such file or directory (from environment STREAMSHIFT_ADMIN_AUTH_TOKEN_FILE)`},
		{[]string{"--admin-auth-token-file", two}, nil, `admin.auth-token-file "` + two + `": the token is more than one line (from --admin-auth-token-file)`},
		{[]string{"--admin-tls"}, nil, "admin.tls: needs the listeners' certificate, tls.cert-file and tls.key-file (from --admin-tls)"},
	} {
		_, _, err := Load(append([]string{"--upstream", "a:1"}, tc.args...), tc.env, &bytes.Buffer{})
		if err == nil || strings.TrimSpace(err.Error()) != tc.want {
			t.Errorf("%v %v:\n got %v\nwant %s", tc.args, tc.env, err, tc.want)
		}
	}
}
