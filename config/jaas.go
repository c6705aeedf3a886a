package config

import (
	"errors"
	"fmt"
	"strings"
)

// The login modules of Kafka's PLAIN and SCRAM mechanisms.
const (
	plainLoginModule = "org.apache.kafka.common.security.plain.PlainLoginModule"
	scramLoginModule = "org.apache.kafka.common.security.scram.ScramLoginModule"
)

// jaasLogin is the one login module of a client's sasl.jaas.config.
type jaasLogin struct {
	module  string
	flag    string
	options map[string]string
}

// parseJAAS reads a sasl.jaas.config value as Kafka's JaasConfig does:
// `<LoginModule class> <flag> [name=value ...];`, with exactly one login
// module (a client has one), the flag one of required, requisite,
// sufficient or optional, values bare words or in double quotes (with
// Java's escapes \" and \\), and the closing ';'.
func parseJAAS(s string) (jaasLogin, error) {
	toks, err := jaasTokens(s)
	if err != nil {
		return jaasLogin{}, err
	}
	l := jaasLogin{options: map[string]string{}}
	next := func() (jaasToken, bool) {
		if len(toks) == 0 {
			return jaasToken{}, false
		}
		t := toks[0]
		toks = toks[1:]
		return t, true
	}
	t, ok := next()
	if !ok || t.quoted || t.text == ";" || t.text == "=" {
		return l, errors.New("no login module class (want e.g. " + scramLoginModule + " required username=\"...\" password=\"...\";)")
	}
	l.module = t.text
	t, ok = next()
	switch f := strings.ToLower(t.text); {
	case !ok || t.quoted:
		return l, fmt.Errorf("%s: no control flag (want required)", l.module)
	case f == "required" || f == "requisite" || f == "sufficient" || f == "optional":
		l.flag = f
	default:
		return l, fmt.Errorf("%s: control flag %q: want required, requisite, sufficient or optional", l.module, t.text)
	}
	for {
		t, ok = next()
		if !ok {
			return l, errors.New("no ';' at the end")
		}
		if !t.quoted && t.text == ";" {
			break
		}
		name := t.text
		if t.quoted || name == "=" {
			return l, fmt.Errorf("option %q: want name=value", t.text)
		}
		if eq, ok := next(); !ok || eq.quoted || eq.text != "=" {
			return l, fmt.Errorf("option %s: no '=' after it", name)
		}
		v, ok := next()
		if !ok || (!v.quoted && (v.text == ";" || v.text == "=")) {
			return l, fmt.Errorf("option %s: no value", name)
		}
		l.options[name] = v.text
	}
	if len(toks) > 0 {
		return l, errors.New("more than one login module: a client takes one")
	}
	return l, nil
}

type jaasToken struct {
	text   string
	quoted bool
}

// jaasTokens splits a JAAS configuration into words, quoted strings, '='
// and ';'. Comments (Java's StreamTokenizer takes // and /* */) are
// skipped.
func jaasTokens(s string) ([]jaasToken, error) {
	var out []jaasToken
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.HasPrefix(s[i:], "//"):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return nil, errors.New("unclosed /* comment")
			}
			i += end + 4
		case c == '=' || c == ';':
			out = append(out, jaasToken{text: string(c)})
			i++
		case c == '"':
			var b strings.Builder
			i++
			for {
				if i >= len(s) {
					return nil, errors.New("unclosed quote")
				}
				if s[i] == '"' {
					i++
					break
				}
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				b.WriteByte(s[i])
				i++
			}
			out = append(out, jaasToken{text: b.String(), quoted: true})
		default:
			start := i
			for i < len(s) && !strings.ContainsRune(" \t\r\n=;\"", rune(s[i])) {
				i++
			}
			out = append(out, jaasToken{text: s[start:i]})
		}
	}
	return out, nil
}
