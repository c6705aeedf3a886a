package config

import (
	"strings"
	"testing"
)

// TestParseJAAS: sasl.jaas.config values as Kafka's JaasConfig reads them,
// and the malformed ones it refuses.
func TestParseJAAS(t *testing.T) {
	for _, tc := range []struct {
		in     string
		module string
		opts   map[string]string
		err    string
	}{
		{in: scramLoginModule + ` required username="alice" password="alice-secret";`, module: scramLoginModule, opts: map[string]string{"username": "alice", "password": "alice-secret"}},
		{in: plainLoginModule + " required username=bob password=b0b;", module: plainLoginModule, opts: map[string]string{"username": "bob", "password": "b0b"}},
		{in: "  " + plainLoginModule + "  REQUIRED\n  username=\"a b\"\n  password=\"q\\\"uo\\\\te;=\" ;  ", module: plainLoginModule, opts: map[string]string{"username": "a b", "password": `q"uo\te;=`}},
		{in: scramLoginModule + ` required /* a comment */ username="u" // another` + "\n" + ` password="p" tokenauth=false;`, module: scramLoginModule, opts: map[string]string{"username": "u", "password": "p", "tokenauth": "false"}},
		{in: scramLoginModule + ` required username="u" password="p"`, err: "no ';' at the end"},
		{in: scramLoginModule + ` username="u" password="p";`, err: `control flag "username": want required`},
		{in: scramLoginModule + `;`, err: `control flag ";"`},
		{in: `required username="u";`, err: `control flag "username"`},
		{in: `"quoted" required;`, err: "no login module class"},
		{in: scramLoginModule + ` required username "u";`, err: "option username: no '=' after it"},
		{in: scramLoginModule + ` required username=;`, err: "option username: no value"},
		{in: scramLoginModule + ` required username="u;`, err: "unclosed quote"},
		{in: scramLoginModule + ` required username="u"; ` + plainLoginModule + ` required;`, err: "more than one login module"},
		{in: "", err: "no login module class"},
	} {
		l, err := parseJAAS(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseJAAS(%q): %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseJAAS(%q): %v", tc.in, err)
			continue
		}
		if l.module != tc.module || len(l.options) != len(tc.opts) {
			t.Errorf("parseJAAS(%q) = %+v", tc.in, l)
		}
		for k, v := range tc.opts {
			if l.options[k] != v {
				t.Errorf("parseJAAS(%q): %s = %q, want %q", tc.in, k, l.options[k], v)
			}
		}
	}
}
