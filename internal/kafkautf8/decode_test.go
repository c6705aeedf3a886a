package kafkautf8

import (
	"bufio"
	"encoding/hex"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

var inputs = flag.Bool("inputs", false, "print the inputs of testdata/java17.txt (hex, one a line) instead of testing")

// javaInputs are byte strings around every branch of the decoder: each
// lead byte class followed by continuation and other bytes, cut short at
// every length, plus random strings over the bytes that matter.
func javaInputs() []string {
	var out []string
	interesting := []byte{0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF4, 0xF5, 0xF7, 0xF8, 0xFF}
	for _, a := range interesting {
		for _, b := range interesting {
			out = append(out, string([]byte{a}), string([]byte{a, b}), string([]byte{a, b, 0x80}), string([]byte{a, b, 0x80, 0x80}), string([]byte{a, b, 0x41}), string([]byte{a, b, 0x80, 0x41}))
		}
	}
	r := rand.New(rand.NewPCG(42, 42))
	for range 1000 {
		n := 1 + r.IntN(8)
		b := make([]byte, n)
		for i := range b {
			b[i] = interesting[r.IntN(len(interesting))]
		}
		out = append(out, string(b))
	}
	return out
}

// Decode gives what Java 17's new String(bytes, UTF_8) gives (Kafka's
// Utils.utf8), for every input of testdata/java17.txt.
func TestJavaVectors(t *testing.T) {
	if *inputs {
		for _, in := range javaInputs() {
			fmt.Println(hex.EncodeToString([]byte(in)))
		}
		return
	}
	f, err := os.Open("testdata/java17.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		in, want, _ := strings.Cut(line, " ")
		ib, err := hex.DecodeString(in)
		if err != nil {
			t.Fatal(err)
		}
		got := Decode(string(ib))
		if hex.EncodeToString([]byte(got)) != want {
			t.Errorf("Decode(%x) = %x, Java gives %s", ib, got, want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Decode(%x) = %x, not UTF-8", ib, got)
		}
		n++
	}
	if n < 1000 {
		t.Fatalf("%d vectors, want the whole file", n)
	}
}

func TestDecodeKeepsValid(t *testing.T) {
	for _, s := range []string{"", "app", "grüppe-€-𝄞", "bad-\uFFFD-group"} {
		if got := Decode(s); got != s {
			t.Errorf("Decode(%q) = %q", s, got)
		}
	}
	if got := Decode("bad-\xff\xfe-group"); got != "bad-\uFFFD\uFFFD-group" {
		t.Errorf("Decode(bad-\\xff\\xfe-group) = %q", got)
	}
}

// Whatever the bytes, Decode gives valid UTF-8, keeps valid input as it
// is, and decoding twice changes nothing more.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"", "app", "bad-\xff\xfe-group", "\xed\xa0\x80", "\xf0\x9f", "\xe2\x82", "\xf4\x90\x80\x80"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := Decode(string(b))
		if !utf8.ValidString(got) {
			t.Fatalf("Decode(%x) = %x, not UTF-8", b, got)
		}
		if utf8.Valid(b) && got != string(b) {
			t.Fatalf("Decode changed valid %q to %q", b, got)
		}
		if Decode(got) != got {
			t.Fatalf("Decode not idempotent on %x", b)
		}
	})
}
