package config

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Problem is one thing wrong with the configuration, in one shape: the key,
// the value when one value is wrong, what is wrong in words, and where the
// value came from (limits.request-timeout "30": a duration needs a unit,
// e.g. 30s or 500ms (from environment STREAMSHIFT_LIMITS_REQUEST_TIMEOUT)).
// The user set a flag, a variable or a file line, not "a key": the source
// says which one to fix.
type Problem struct {
	// Key is the configuration key ("" when the line names none).
	Key string
	// Message starts with the key and says what is wrong.
	Message string
	// Source is where the value came from, in words: "--request-timeout",
	// "environment STREAMSHIFT_…", "config file x.yaml"; empty for a
	// default.
	Source string
}

func (p Problem) String() string {
	if p.Source == "" {
		return p.Message
	}
	return p.Message + " (from " + p.Source + ")"
}

// Problems are every problem found at once; the error is one line each.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// has reports whether a problem about key is already listed.
func (ps Problems) has(key string) bool {
	for _, p := range ps {
		if key != "" && p.Key == key {
			return true
		}
	}
	return false
}

// UsageError is a command line that does not parse: an unknown flag, a flag
// without its value, a stray argument. The command prints it, then its
// short usage, and exits 2.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// sources records where each key's value came from, the last source
// setting a key winning as it does for the value.
type sources map[string]string

// attribute fills in the Source of each problem whose key a flag, a
// variable or the file set.
func (s sources) attribute(ps Problems) Problems {
	for i := range ps {
		if ps[i].Source == "" {
			ps[i].Source = s[ps[i].Key]
		}
	}
	return ps
}

// problemsOf turns validation lines (each starting with the key it is
// about, as Validate writes them) into Problems.
func problemsOf(lines []string) Problems {
	keys := knownKeys()
	// The longest key first: limits.max-connections-per-ip before
	// limits.max-connections.
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	out := make(Problems, 0, len(lines))
	for _, line := range lines {
		p := Problem{Message: line}
		for _, key := range keys {
			named := key
			if rest, ok := strings.CutPrefix(key, streamsKeyPrefix); ok {
				named = "streams: " + rest // streams.validate's lines
			}
			if strings.HasPrefix(line, named) && len(line) > len(named) && strings.ContainsRune(": ", rune(line[len(named)])) {
				p.Key = key
				break
			}
		}
		out = append(out, p)
	}
	return out
}

// keyTypes maps every known key to the Go type its value is decoded into.
func keyTypes() map[string]reflect.Type {
	out := map[string]reflect.Type{}
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("koanf")
			if tag == "" || tag == "-" {
				continue
			}
			if f.Type.Kind() == reflect.Struct {
				walk(f.Type, prefix+tag+".")
				continue
			}
			out[prefix+tag] = f.Type
		}
	}
	walk(reflect.TypeOf(Config{}), "")
	walk(reflect.TypeOf(Streams{}), streamsKeyPrefix)
	return out
}

var durationType = reflect.TypeOf(time.Duration(0))

// valueProblem says, in words, why v (as the file, a variable or a flag
// gave it) cannot be a value of type t; "" when it can. It runs before the
// decoder so that no decoder text reaches the user, and so that a bare
// number is never taken as nanoseconds.
func valueProblem(t reflect.Type, v any) string {
	if _, isList := v.([]any); isList && t.Kind() != reflect.Slice {
		return "a single value, not a list"
	}
	if _, isMap := v.(map[string]any); isMap {
		return "a single value, not a section"
	}
	s := strings.TrimSpace(fmt.Sprint(v))
	switch {
	case t == durationType:
		if _, isString := v.(string); isString {
			if _, err := time.ParseDuration(s); err == nil {
				return ""
			}
		}
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return "a duration needs a unit, e.g. 30s or 500ms"
		}
		return "not a duration; write it like 30s, 500ms or 5m"
	case t.Kind() == reflect.Bool:
		if _, ok := v.(bool); ok {
			return ""
		}
		if _, ok := v.(string); ok {
			if _, err := strconv.ParseBool(s); err == nil {
				return ""
			}
		}
		return "want true or false"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		bits := t.Bits()
		lo, hi := -(int64(1) << (bits - 1)), int64(1)<<(bits-1)-1
		switch x := v.(type) {
		case int:
			if int64(x) < lo || int64(x) > hi {
				return fmt.Sprintf("out of range (%d..%d)", lo, hi)
			}
			return ""
		case int64:
			if x < lo || x > hi {
				return fmt.Sprintf("out of range (%d..%d)", lo, hi)
			}
			return ""
		case float64:
			if x != math.Trunc(x) {
				return "a whole number, e.g. " + strconv.FormatInt(int64(x), 10)
			}
			if x < float64(lo) || x > float64(hi) {
				return fmt.Sprintf("out of range (%d..%d)", lo, hi)
			}
			return ""
		case string:
			if _, err := strconv.ParseInt(s, 10, bits); err != nil {
				if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
					return fmt.Sprintf("out of range (%d..%d)", lo, hi)
				}
				return "a whole number, e.g. 1048576 (no units)"
			}
			return ""
		}
		return "a whole number"
	case t.Kind() == reflect.Slice:
		if list, ok := v.([]any); ok {
			for _, e := range list {
				switch e.(type) {
				case []any, map[string]any:
					return "a list of single values"
				}
			}
		}
		return ""
	}
	return ""
}

// streamsValueProblem is valueProblem for a key of the streams: section,
// kept as text for the coordinator to parse: its numbers are whole, and
// Kafka's *.ms are milliseconds without a unit.
func streamsValueProblem(key string, v any) string {
	name := strings.TrimPrefix(key, streamsKeyPrefix)
	if name == "rack.aware.assignment.tags" {
		return ""
	}
	s := strings.TrimSpace(fmt.Sprint(v))
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ""
	}
	if strings.HasSuffix(name, ".ms") {
		return "a whole number of milliseconds (Kafka's unit for *.ms), e.g. 45000"
	}
	return "a whole number"
}

// shownValue is v as the user wrote it, for a problem's message.
func shownValue(v any) string {
	if list, ok := v.([]any); ok {
		parts := make([]string, len(list))
		for i, e := range list {
			parts[i] = fmt.Sprint(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}

// editDistance is the Levenshtein distance of a and b, to suggest the flag
// or key a typo meant.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// closest is the candidate nearest to typo, "" when none is near enough
// to be what was meant (at most a third of its letters off, and 3).
func closest(typo string, candidates []string) string {
	best, bestD := "", math.MaxInt
	for _, c := range candidates {
		if d := editDistance(typo, c); d < bestD {
			best, bestD = c, d
		}
	}
	if bestD > min(3, max(1, len(typo)/3)) {
		return ""
	}
	return best
}
