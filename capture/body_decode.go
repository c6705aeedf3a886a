package capture

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
)

// DecodeBody reads a body written by AppendBody back into the kmsg request
// or response msg (a pointer), for tools that reread a capture. Redacted
// and dropped fields (secrets, record data) come back empty; the decoded
// consumer-protocol fields are skipped (the bytes next to them are the
// truth).
func DecodeBody(data []byte, msg any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var tree any
	if err := d.Decode(&tree); err != nil {
		return err
	}
	return setValue(reflect.ValueOf(msg).Elem(), tree, "")
}

func setValue(v reflect.Value, j any, path string) error {
	if j == nil {
		v.Set(reflect.Zero(v.Type()))
		return nil
	}
	bad := func() error { return fmt.Errorf("%s: %T does not fit %s", path, j, v.Type()) }
	switch v.Kind() {
	case reflect.Pointer:
		nv := reflect.New(v.Type().Elem())
		if err := setValue(nv.Elem(), j, path); err != nil {
			return err
		}
		v.Set(nv)
		return nil
	case reflect.Struct:
		obj, ok := j.(map[string]any)
		if !ok {
			return bad()
		}
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() || f.Name == "Version" || f.Name == "UnknownTags" {
				continue
			}
			id := t.Name() + "." + f.Name
			if recordFields[id] || secretFields[id] {
				continue
			}
			name := kafkaName(t.Name(), f.Name)
			fj, ok := obj[name]
			if !ok {
				continue
			}
			if err := setValue(v.Field(i), fj, path+"."+name); err != nil {
				return err
			}
		}
		return nil
	case reflect.String:
		s, ok := j.(string)
		if !ok {
			return bad()
		}
		v.SetString(s)
	case reflect.Bool:
		b, ok := j.(bool)
		if !ok {
			return bad()
		}
		v.SetBool(b)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		n, ok := j.(json.Number)
		if !ok {
			return bad()
		}
		i, err := n.Int64()
		if err != nil || v.OverflowInt(i) {
			return fmt.Errorf("%s: %v does not fit %s", path, n, v.Type())
		}
		v.SetInt(i)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		n, ok := j.(json.Number)
		if !ok {
			return bad()
		}
		var u uint64
		if _, err := fmt.Sscan(n.String(), &u); err != nil || v.OverflowUint(u) {
			return fmt.Errorf("%s: %v does not fit %s", path, n, v.Type())
		}
		v.SetUint(u)
	case reflect.Float32, reflect.Float64:
		n, ok := j.(json.Number)
		if !ok {
			return bad()
		}
		f, err := n.Float64()
		if err != nil {
			return bad()
		}
		v.SetFloat(f)
	case reflect.Array:
		s, ok := j.(string)
		if !ok {
			return bad()
		}
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil || len(b) != v.Len() {
			return fmt.Errorf("%s: %q is no Kafka Uuid", path, s)
		}
		reflect.Copy(v, reflect.ValueOf(b))
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			s, ok := j.(string)
			if !ok {
				return bad()
			}
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			v.SetBytes(b)
			return nil
		}
		arr, ok := j.([]any)
		if !ok {
			return bad()
		}
		sv := reflect.MakeSlice(v.Type(), len(arr), len(arr))
		for i, e := range arr {
			if err := setValue(sv.Index(i), e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		v.Set(sv)
	default:
		return bad()
	}
	return nil
}
