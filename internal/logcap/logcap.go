// Package logcap bounds the size of log lines. Log lines carry what clients
// sent (group, member, process and instance ids, topic names), and Kafka's
// protocol lets a client send strings of megabytes: without a cap, a few
// requests fill a disk with log. Writer sits between zerolog and the real
// output (the console writer included, which reads zerolog's JSON): a short
// line passes untouched; in a long one every string longer than MaxString is
// cut, with its length appended ("abc…(1048576 bytes)"), and arrays keep
// their first MaxElements elements and say how many they dropped. The result
// is still one line of valid JSON.
//
// It owns the cut only: it never drops a line, never reorders and
// imports nothing of the project.
package logcap

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"unicode/utf8"
)

// Defaults of a Writer.
const (
	DefaultMaxLine     = 4 << 10
	DefaultMaxString   = 256
	DefaultMaxElements = 64
	maxDepth           = 64
)

// Writer caps the lines written through it; see the package comment. It is
// safe for concurrent use if Out is.
type Writer struct {
	Out io.Writer
	// MaxLine: lines of at most this many bytes pass untouched.
	MaxLine int
	// MaxString: in a longer line, strings (keys and values) longer than
	// this are cut.
	MaxString int
	// MaxElements: in a longer line, arrays keep this many elements.
	MaxElements int
}

// New returns a Writer with the defaults.
func New(out io.Writer) *Writer {
	return &Writer{Out: out, MaxLine: DefaultMaxLine, MaxString: DefaultMaxString, MaxElements: DefaultMaxElements}
}

// Write writes p, one zerolog event, capped.
func (w *Writer) Write(p []byte) (int, error) {
	if len(p) <= w.MaxLine {
		return w.Out.Write(p)
	}
	if _, err := w.Out.Write(w.Cap(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Cap returns line (a JSON object and a newline) with its strings and
// arrays cut. A line that is not JSON becomes a JSON object holding its
// beginning and its length.
func (w *Writer) Cap(line []byte) []byte {
	body := bytes.TrimRight(line, "\n")
	c := capper{w: w, src: body, out: make([]byte, 0, 2*w.MaxLine)}
	end, err := c.value(c.skipSpace(0), 0)
	if err == nil && c.skipSpace(end) != len(body) {
		err = errSyntax
	}
	if err != nil {
		prefix := body[:min(len(body), w.MaxString)]
		for len(prefix) > 0 && !utf8.Valid(prefix) {
			prefix = prefix[:len(prefix)-1]
		}
		out, _ := json.Marshal(struct {
			Level   string `json:"level"`
			Message string `json:"message"`
			Line    string `json:"line"`
			Bytes   int    `json:"line_bytes"`
		}{"error", "a log line that is not JSON, cut", string(prefix) + "…", len(body)})
		return append(out, '\n')
	}
	return append(c.out, '\n')
}

var errSyntax = errors.New("logcap: not JSON")

type capper struct {
	w    *Writer
	src  []byte
	out  []byte
	skip int // > 0 while an element past MaxElements is skipped
}

func (c *capper) emit(b ...byte) {
	if c.skip == 0 {
		c.out = append(c.out, b...)
	}
}

func (c *capper) skipSpace(i int) int {
	for i < len(c.src) && (c.src[i] == ' ' || c.src[i] == '\t' || c.src[i] == '\r' || c.src[i] == '\n') {
		i++
	}
	return i
}

// value copies the JSON value at i, capped, and returns the index after it.
func (c *capper) value(i, depth int) (int, error) {
	if i >= len(c.src) || depth > maxDepth {
		return 0, errSyntax
	}
	switch b := c.src[i]; {
	case b == '"':
		return c.str(i)
	case b == '{':
		return c.object(i, depth)
	case b == '[':
		return c.array(i, depth)
	default:
		// A number or a literal: up to the next delimiter.
		j := i
		for j < len(c.src) && !bytes.ContainsRune([]byte(",]} \t\r\n"), rune(c.src[j])) {
			j++
		}
		if j == i {
			return 0, errSyntax
		}
		c.emit(c.src[i:j]...)
		return j, nil
	}
}

func (c *capper) object(i, depth int) (int, error) {
	c.emit('{')
	i = c.skipSpace(i + 1)
	if i < len(c.src) && c.src[i] == '}' {
		c.emit('}')
		return i + 1, nil
	}
	for {
		if i >= len(c.src) || c.src[i] != '"' {
			return 0, errSyntax
		}
		j, err := c.str(i)
		if err != nil {
			return 0, err
		}
		j = c.skipSpace(j)
		if j >= len(c.src) || c.src[j] != ':' {
			return 0, errSyntax
		}
		c.emit(':')
		if j, err = c.value(c.skipSpace(j+1), depth+1); err != nil {
			return 0, err
		}
		j = c.skipSpace(j)
		if j >= len(c.src) {
			return 0, errSyntax
		}
		switch c.src[j] {
		case ',':
			c.emit(',')
			i = c.skipSpace(j + 1)
		case '}':
			c.emit('}')
			return j + 1, nil
		default:
			return 0, errSyntax
		}
	}
}

func (c *capper) array(i, depth int) (int, error) {
	c.emit('[')
	i = c.skipSpace(i + 1)
	if i < len(c.src) && c.src[i] == ']' {
		c.emit(']')
		return i + 1, nil
	}
	n, dropped := 0, 0
	for {
		over := n >= c.w.MaxElements
		if over {
			c.skip++
			dropped++
		} else if n > 0 {
			c.emit(',')
		}
		j, err := c.value(i, depth+1)
		if over {
			c.skip--
		}
		if err != nil {
			return 0, err
		}
		n++
		j = c.skipSpace(j)
		if j >= len(c.src) {
			return 0, errSyntax
		}
		switch c.src[j] {
		case ',':
			i = c.skipSpace(j + 1)
		case ']':
			if dropped > 0 {
				c.emit([]byte(`,"…(` + strconv.Itoa(dropped) + ` more)"`)...)
			}
			c.emit(']')
			return j + 1, nil
		default:
			return 0, errSyntax
		}
	}
}

// str copies the string at i (its quote), cut if it is too long.
func (c *capper) str(i int) (int, error) {
	j := i + 1
	for j < len(c.src) && c.src[j] != '"' {
		if c.src[j] == '\\' {
			j++
		}
		j++
	}
	if j >= len(c.src) {
		return 0, errSyntax
	}
	content := c.src[i+1 : j]
	if c.skip == 0 {
		c.out = append(c.out, '"')
		if len(content) <= c.w.MaxString {
			c.out = append(c.out, content...)
			c.out = append(c.out, '"')
		} else {
			c.appendString(content[:c.cutPoint(content)], len(content))
		}
	}
	return j + 1, nil
}

// appendString ends a string (its opening quote written) with the kept
// part, a mark and the original length.
func (c *capper) appendString(kept []byte, n int) {
	c.out = append(c.out, kept...)
	c.out = append(c.out, "…("...)
	c.out = strconv.AppendInt(c.out, int64(n), 10)
	c.out = append(c.out, ` bytes)"`...)
}

// cutPoint is where to cut a string's JSON content at MaxString bytes or
// fewer: never inside an escape sequence or a UTF-8 character, and never
// before a character that is not valid inside a JSON string.
func (c *capper) cutPoint(content []byte) int {
	k := min(c.w.MaxString, len(content))
	for j := 0; j < k; {
		if content[j] == '\\' {
			l := 2
			if j+1 < len(content) && content[j+1] == 'u' {
				l = 6
			}
			if j+l > k {
				k = j
				break
			}
			j += l
			continue
		}
		j++
	}
	for k > 0 && k < len(content) && content[k]&0xC0 == 0x80 {
		k--
	}
	return k
}
