package capture

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// fill sets every field of v to pseudo-random values, slices of one or two
// elements, deep enough for every kmsg message.
func fill(r *rand.Rand, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && v.Type().Field(i).Name != "UnknownTags" && v.Type().Field(i).Name != "Version" {
				fill(r, v.Field(i), depth+1)
			}
		}
	case reflect.Pointer:
		if r.IntN(4) == 0 || depth > 8 {
			return
		}
		nv := reflect.New(v.Type().Elem())
		fill(r, nv.Elem(), depth+1)
		v.Set(nv)
	case reflect.String:
		v.SetString([]string{"", "g1", "member-<1>", "ü\"\\\n"}[r.IntN(4)])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(r.IntN(200)) - 100)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(r.IntN(200)))
	case reflect.Float64:
		v.SetFloat(float64(r.IntN(100)) / 4)
	case reflect.Array:
		for i := range v.Len() {
			v.Index(i).SetUint(uint64(r.IntN(256)))
		}
	case reflect.Slice:
		if depth > 8 || r.IntN(5) == 0 {
			return
		}
		n := 1 + r.IntN(2)
		sv := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(r, sv.Index(i), depth+1)
		}
		v.Set(sv)
	}
}

type wire interface {
	Key() int16
	MaxVersion() int16
	SetVersion(int16)
	AppendTo([]byte) []byte
	ReadFrom([]byte) error
}

// TestBodyRoundTrip: for every API kmsg knows, every version, requests and
// responses: a message as kmsg reads it off the wire, written as a capture
// body and read back, is the same message (but for what a capture drops:
// record data and secrets).
func TestBodyRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	apis, skipped, checked := 0, 0, 0
	for key := int16(0); key < 200; key++ {
		if kmsg.RequestForKey(key) == nil {
			continue
		}
		apis++
		for _, response := range []bool{false, true} {
			for v := int16(0); v <= kmsg.RequestForKey(key).MaxVersion(); v++ {
				for round := range 3 {
					m := newBody(key, response).(wire)
					fill(r, reflect.ValueOf(m).Elem(), 0)
					m.SetVersion(v)
					b := m.AppendTo(nil)
					wireMsg := newBody(key, response).(wire)
					wireMsg.SetVersion(v)
					if err := wireMsg.ReadFrom(b); err != nil {
						skipped++
						continue // kmsg cannot read what it wrote from random fields (lengths at old versions)
					}
					js := AppendBody(nil, wireMsg)
					if !json.Valid(js) {
						t.Fatalf("%s v%d: invalid JSON %s", kmsg.NameForKey(key), v, js)
					}
					back := newBody(key, response).(wire)
					back.SetVersion(v)
					if err := DecodeBody(js, back); err != nil {
						t.Fatalf("%s v%d round %d: %v\n%s", kmsg.NameForKey(key), v, round, err, js)
					}
					want := reflect.ValueOf(wireMsg).Elem()
					dropUncaptured(want)
					clearUnknownTags(reflect.ValueOf(back).Elem())
					clearUnknownTags(want)
					checked++
					if !reflect.DeepEqual(want.Interface(), reflect.ValueOf(back).Elem().Interface()) {
						t.Fatalf("%s v%d (response %v): round trip differs\n json %s\n got  %+v\n want %+v", kmsg.NameForKey(key), v, response, js, back, wireMsg)
					}
				}
			}
		}
	}
	t.Logf("%d APIs, %d messages checked, %d random ones kmsg could not reread", apis, checked, skipped)
	if apis < 70 || checked < 1000 {
		t.Fatalf("only %d APIs", apis)
	}
}

// dropUncaptured zeroes the fields a capture does not hold.
func dropUncaptured(v reflect.Value) {
	zeroFields(v, func(t reflect.Type, f reflect.StructField) bool {
		id := t.Name() + "." + f.Name
		return recordFields[id] || secretFields[id]
	})
}

func clearUnknownTags(v reflect.Value) {
	zeroFields(v, func(_ reflect.Type, f reflect.StructField) bool { return f.Name == "UnknownTags" })
}

// zeroFields zeroes, in v and every message below it, the struct fields
// drop picks.
func zeroFields(v reflect.Value, drop func(reflect.Type, reflect.StructField) bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			zeroFields(v.Elem(), drop)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.Uint8 {
			for i := range v.Len() {
				zeroFields(v.Index(i), drop)
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if drop(v.Type(), f) {
				v.Field(i).Set(reflect.Zero(f.Type))
			} else if f.IsExported() {
				zeroFields(v.Field(i), drop)
			}
		}
	}
}

// TestBodyKafkaNames: the JSON of a JoinGroup response uses Kafka's names
// where kmsg renamed the fields, and decodes the Streams metadata.
func TestBodyKafkaNames(t *testing.T) {
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.Version = 9
	resp.Generation = 7
	resp.LeaderID = "m1"
	js := string(AppendBody(nil, resp))
	for _, want := range []string{`"generationId":7`, `"leader":"m1"`, `"throttleTimeMs":0`, `"protocolName":null`} {
		if !strings.Contains(js, want) {
			t.Errorf("%s lacks %s", js, want)
		}
	}
}

// TestBodyRedaction: SASL tokens and config values being set never reach a
// capture; record data is its size only.
func TestBodyRedaction(t *testing.T) {
	sasl := kmsg.NewPtrSASLAuthenticateRequest()
	sasl.SASLAuthBytes = []byte("\x00alice\x00hunter2")
	produce := kmsg.NewPtrProduceRequest()
	tp := kmsg.NewProduceRequestTopicPartition()
	tp.Records = []byte("secret-record-payload")
	pt := kmsg.NewProduceRequestTopic()
	pt.Partitions = append(pt.Partitions, tp)
	produce.Topics = append(produce.Topics, pt)
	alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	cfg.Name = "sasl.jaas.config"
	pw := "password=hunter2"
	cfg.Value = &pw
	res.Configs = append(res.Configs, cfg)
	alter.Resources = append(alter.Resources, res)
	for _, tc := range []struct {
		msg  any
		want string
	}{
		{sasl, `"authBytes":"[redacted]"`},
		{produce, `"recordsSizeInBytes":21`},
		{alter, `"value":"[redacted]"`},
	} {
		js := string(AppendBody(nil, tc.msg))
		if strings.Contains(js, "hunter2") || strings.Contains(js, "aHVudGVyMg") || strings.Contains(js, "secret-record") || strings.Contains(js, "c2VjcmV0") {
			t.Errorf("secret in %s", js)
		}
		if !strings.Contains(js, tc.want) {
			t.Errorf("%s lacks %s", js, tc.want)
		}
	}
}
