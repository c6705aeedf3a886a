package proxy

import (
	"reflect"
	"unicode/utf8"

	"github.com/streamshift/streamshift/internal/kafkautf8"
)

// A request's strings are read as Kafka reads them (kafkautf8): kmsg keeps
// a string's bytes as they came, and a group id that is not UTF-8 would
// otherwise be a group streamshift holds and Kafka never could, written to
// the group log, the capture and the status page, and a label value that
// makes /metrics fail (issue #42). Every string field of a request the
// proxy decodes for an interceptor, and the client id of its header, is
// decoded here, once, before anything else sees it. Bytes fields (member
// metadata, assignments) are not strings and stay as they are; a request
// forwarded untouched keeps its bytes, which the broker decodes the same
// way.

// kafkaStrings decodes every string of a decoded request in place.
func kafkaStrings(body any) {
	v := reflect.ValueOf(body)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		decodeStrings(v.Elem())
	}
}

func decodeStrings(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if s := v.String(); !utf8.ValidString(s) && v.CanSet() {
			v.SetString(kafkautf8.Decode(s))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			decodeStrings(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				decodeStrings(v.Field(i))
			}
		}
	case reflect.Slice:
		switch v.Type().Elem().Kind() {
		case reflect.String, reflect.Struct, reflect.Pointer, reflect.Slice:
			for i := range v.Len() {
				decodeStrings(v.Index(i))
			}
		}
	}
}

// kafkaString is s as Kafka reads it.
func kafkaString(s string) string { return kafkautf8.Decode(s) }
