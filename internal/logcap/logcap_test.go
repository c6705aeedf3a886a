package logcap

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// A log line carrying client-supplied ids of 1 MiB stays small and valid
// JSON, and says how long each cut value was.
func TestMegabyteIDsMakeBoundedLines(t *testing.T) {
	var buf bytes.Buffer
	log := zerolog.New(New(&buf))
	id := strings.Repeat("m", 1<<20)
	topics := make([]string, 30000)
	for i := range topics {
		topics[i] = "topic"
	}
	log.Info().Str("group", id).Str("member_id", id).Strs("topics", topics).Msgf("[GroupId %s] Member %s joined.", id, id)
	line := buf.Bytes()
	if len(line) > 2*DefaultMaxLine {
		t.Fatalf("line of %d bytes", len(line))
	}
	var v map[string]any
	if err := json.Unmarshal(line, &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, line)
	}
	want := strings.Repeat("m", DefaultMaxString) + "…(1048576 bytes)"
	if v["member_id"] != want || v["group"] != want {
		t.Fatalf("member_id %.300q", v["member_id"])
	}
	if !strings.HasSuffix(v["message"].(string), "bytes)") {
		t.Fatalf("message %.300q", v["message"])
	}
	ts := v["topics"].([]any)
	if len(ts) != DefaultMaxElements+1 || ts[DefaultMaxElements] != "…(29936 more)" {
		t.Fatalf("topics: %d elements, last %v", len(ts), ts[len(ts)-1])
	}
}

// The console format reads zerolog's JSON: the writer goes before it.
func TestConsoleFormatIsCapped(t *testing.T) {
	var buf bytes.Buffer
	log := zerolog.New(New(zerolog.ConsoleWriter{Out: &buf, NoColor: true}))
	id := strings.Repeat("p", 1<<20)
	log.Warn().Str("process_id", id).Msg("a member with a long process id")
	if n := buf.Len(); n > 2*DefaultMaxLine {
		t.Fatalf("console line of %d bytes", n)
	}
	if !strings.Contains(buf.String(), "…(1048576 bytes)") {
		t.Fatalf("console line %.400q", buf.String())
	}
}

func TestShortLinesPassUntouched(t *testing.T) {
	var buf bytes.Buffer
	w := New(&buf)
	line := []byte(`{"level":"info","member_id":"` + strings.Repeat("x", 1000) + `","message":"ok"}` + "\n")
	if _, err := w.Write(line); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), line) {
		t.Fatalf("a short line changed: %s", buf.Bytes())
	}
}

// Cuts never split an escape sequence or a UTF-8 character, and whatever
// the input, the output is one line of valid JSON.
func TestCapKeepsValidJSON(t *testing.T) {
	w := &Writer{MaxLine: 0, MaxString: 8, MaxElements: 2}
	for _, in := range []string{
		`{"a":"1234567\"89abc"}`,
		`{"a":"123456\u00e9789abc"}`,
		`{"a":"1234567é89abc"}`,
		`{"a":"12345678","b":[1,2,3,{"c":[4,5,6]}],"d":{"e":null,"f":true,"g":-1.5e3}}`,
		`{"a":[[1,2,3],[4,5,6],[7,8,9]]}`,
		`not json at all ` + strings.Repeat("\x00\"", 300),
		`{"a":"unterminated`,
		`{"a":1}} trailing`,
		strings.Repeat("[", 200) + strings.Repeat("]", 200),
	} {
		out := w.Cap([]byte(in + "\n"))
		if !json.Valid(out) || bytes.Count(out, []byte("\n")) != 1 || out[len(out)-1] != '\n' {
			t.Errorf("Cap(%.60q) = %.200q: not one line of JSON", in, out)
		}
	}
	if got := string(w.Cap([]byte(`{"a":"1234567\"89abc"}`))); got != `{"a":"1234567…(14 bytes)"}`+"\n" {
		t.Errorf("escape cut: %s", got)
	}
	if got := string(w.Cap([]byte(`{"a":"1234567é89abc"}`))); got != `{"a":"1234567…(14 bytes)"}`+"\n" {
		t.Errorf("UTF-8 cut: %s", got)
	}
}

func FuzzCap(f *testing.F) {
	f.Add([]byte(`{"a":"1234567\"89abc","b":[1,2,3]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		w := &Writer{MaxLine: 0, MaxString: 4, MaxElements: 2}
		out := w.Cap(in)
		if json.Valid(in) && !json.Valid(out) {
			t.Fatalf("Cap(%q) = %q", in, out)
		}
	})
}
