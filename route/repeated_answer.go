package route

import (
	"bytes"
	"encoding/binary"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// repeatedAnswer is a response whose list of groups (or resources) names
// some entries more than once: resp's list holds each distinct entry once,
// and order says which one answers each position. It encodes to exactly
// the bytes of resp with the list written out in full (kmsg encodes a list
// as its length then its entries, one after the other), but each distinct
// entry is encoded once and copied per mention, and its size is known
// before the answer is built (proxy.SizedResponse), so the proxy can refuse
// an answer over its bound without building it.
type repeatedAnswer[P kmsg.Response, E any] struct {
	kmsg.Response // resp: its key, version and flexibility
	resp          P
	entries       func(P) *[]E
	order         []int32

	// The encoding at version, made once.
	version        int16
	encoded        bool
	prefix, suffix []byte
	pieces         [][]byte
	size           int
}

func newRepeatedAnswer[P kmsg.Response, E any](resp P, entries func(P) *[]E, order []int32) *repeatedAnswer[P, E] {
	return &repeatedAnswer[P, E]{Response: resp, resp: resp, entries: entries, order: order}
}

// encode splits resp's encoding around its list: the list empty and with
// one entry differ only in the length and that entry, so the bytes before
// the length (prefix), after the entries (suffix) and each entry are cut
// from two encodings of one entry each.
func (a *repeatedAnswer[P, E]) encode() {
	v := a.resp.GetVersion()
	if a.encoded && a.version == v {
		return
	}
	a.encoded, a.version = true, v
	list := a.entries(a.resp)
	distinct := *list
	defer func() { *list = distinct }()
	*list = distinct[:0:0]
	empty := a.resp.AppendTo(nil)
	lenBytes := 4
	if a.resp.IsFlexible() {
		lenBytes = 1 // uvarint(0+1) and uvarint(1+1)
	}
	a.pieces = make([][]byte, len(distinct))
	for i := range distinct {
		*list = distinct[i : i+1]
		one := a.resp.AppendTo(nil)
		at := commonPrefix(empty, one) - (lenBytes - 1) // where the length starts
		if i == 0 {
			a.prefix, a.suffix = empty[:at], empty[at+lenBytes:]
		}
		end := len(one) - len(a.suffix)
		if at != len(a.prefix) || end < at+lenBytes || !bytes.Equal(one[end:], a.suffix) {
			panic("route: a repeated answer's list is not where its encoding says") // a kmsg change; the test catches it
		}
		a.pieces[i] = one[at+lenBytes : end]
	}
	if len(distinct) == 0 {
		a.prefix, a.suffix = empty, nil // no entries: order is empty too
	}
	a.size = len(a.prefix) + len(a.appendLength(nil)) + len(a.suffix)
	for _, o := range a.order {
		a.size += len(a.pieces[o])
	}
}

func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func (a *repeatedAnswer[P, E]) appendLength(dst []byte) []byte {
	if a.resp.IsFlexible() {
		return binary.AppendUvarint(dst, uint64(len(a.order))+1)
	}
	return binary.BigEndian.AppendUint32(dst, uint32(len(a.order)))
}

// EncodedSize is the size AppendTo writes (proxy.SizedResponse).
func (a *repeatedAnswer[P, E]) EncodedSize() int {
	a.encode()
	return a.size
}

// AppendTo writes resp with its list in full.
func (a *repeatedAnswer[P, E]) AppendTo(dst []byte) []byte {
	a.encode()
	if len(a.pieces) == 0 {
		return append(dst, a.prefix...)
	}
	dst = append(dst, a.prefix...)
	dst = a.appendLength(dst)
	for _, o := range a.order {
		dst = append(dst, a.pieces[o]...)
	}
	return append(dst, a.suffix...)
}

// expanded is resp with its list written out in full: what a caller that
// needs the structs (a test, a merge) gets.
func (a *repeatedAnswer[P, E]) expanded() []E {
	distinct := *a.entries(a.resp)
	out := make([]E, len(a.order))
	for i, o := range a.order {
		out[i] = distinct[o]
	}
	return out
}
