package capture

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strconv"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
)

// A request or response body is written as Kafka's *JsonConverter classes
// write it (what the broker's request logger prints): Kafka's field names,
// bytes as base64, UUIDs in Kafka's base64 form, null for null. Three
// departures, each for what a capture must not hold or should show:
// record data becomes its size (recordsSizeInBytes, as Kafka's converter
// writes it with serializeRecords off); secrets become redactedValue; and
// the consumer-protocol metadata of group RPCs gets its decoded form next to
// it (the field name plus "Decoded").

// redactedValue stands for a secret in a capture. It is no valid base64,
// so no captured bytes can be mistaken for it.
const redactedValue = "[redacted]"

// recordFields are the kmsg fields holding record batches.
var recordFields = map[string]bool{
	"ProduceRequestTopicPartition.Records":           true,
	"FetchResponseTopicPartition.RecordBatches":      true,
	"ShareFetchResponseTopicPartition.Records":       true,
	"ShareFetchResponseTopicPartition.RecordBatches": true,
}

// secretFields are the kmsg fields redacted: SASL tokens (SaslAuthenticate
// carries passwords for PLAIN), SCRAM credentials, delegation-token HMACs
// and config values being set (sasl.jaas.config, ssl passwords).
var secretFields = map[string]bool{
	"SASLAuthenticateRequest.SASLAuthBytes":                    true,
	"SASLAuthenticateResponse.SASLAuthBytes":                   true,
	"AlterUserSCRAMCredentialsRequestUpsertion.Salt":           true,
	"AlterUserSCRAMCredentialsRequestUpsertion.SaltedPassword": true,
	"CreateDelegationTokenResponse.HMAC":                       true,
	"RenewDelegationTokenRequest.HMAC":                         true,
	"ExpireDelegationTokenRequest.HMAC":                        true,
	"DescribeDelegationTokenResponseTokenDetail.HMAC":          true,
	"AlterConfigsRequestResourceConfig.Value":                  true,
	"IncrementalAlterConfigsRequestResourceConfig.Value":       true,
	"CreateTopicsRequestTopicConfig.Value":                     true,
	"DescribeConfigsResponseResourceConfig.Value":              false, // the broker nulls sensitive values itself
}

// decodedFields are the consumer-protocol byte fields of group RPCs and how
// to decode them.
var decodedFields = map[string]func([]byte) any{
	"JoinGroupRequestProtocol.Metadata":                  decodeSubscription,
	"JoinGroupResponseMember.ProtocolMetadata":           decodeSubscription,
	"DescribeGroupsResponseGroupMember.ProtocolMetadata": decodeSubscription,
	"SyncGroupRequestGroupAssignment.MemberAssignment":   decodeAssignment,
	"SyncGroupResponse.MemberAssignment":                 decodeAssignment,
	"DescribeGroupsResponseGroupMember.MemberAssignment": decodeAssignment,
}

// Subscription is a ConsumerProtocolSubscription with the Streams
// SubscriptionInfo of its user data, when it holds one.
type Subscription struct {
	*classicstreams.ConsumerSubscription
	SubscriptionInfo *classicstreams.SubscriptionInfo `json:"subscriptionInfo,omitempty"`
}

// Assignment is a ConsumerProtocolAssignment with the Streams
// AssignmentInfo of its user data, when it holds one.
type Assignment struct {
	*classicstreams.ConsumerAssignment
	AssignmentInfo *classicstreams.AssignmentInfo `json:"assignmentInfo,omitempty"`
}

// decodeSubscription decodes what a consumer-protocol member joins with;
// nil for other protocols (Connect's) or garbage.
func decodeSubscription(b []byte) any {
	s, err := classicstreams.DecodeConsumerSubscription(b)
	if err != nil {
		return nil
	}
	out := &Subscription{ConsumerSubscription: s}
	if len(s.UserData) > 0 {
		out.SubscriptionInfo, _ = classicstreams.DecodeSubscriptionInfo(s.UserData)
	}
	return out
}

func decodeAssignment(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	a, err := classicstreams.DecodeConsumerAssignment(b)
	if err != nil {
		return nil
	}
	out := &Assignment{ConsumerAssignment: a}
	if len(a.UserData) > 0 {
		out.AssignmentInfo, _ = classicstreams.DecodeAssignmentInfo(a.UserData)
	}
	return out
}

// AppendBody appends the JSON of a kmsg request or response.
func AppendBody(dst []byte, msg any) []byte {
	v := reflect.ValueOf(msg)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return append(dst, "null"...)
		}
		v = v.Elem()
	}
	return appendValue(dst, v, "")
}

func appendValue(dst []byte, v reflect.Value, field string) []byte {
	switch v.Kind() {
	case reflect.Struct:
		return appendStruct(dst, v)
	case reflect.Pointer:
		if v.IsNil() {
			return append(dst, "null"...)
		}
		return appendValue(dst, v.Elem(), field)
	case reflect.String:
		return appendString(dst, v.String())
	case reflect.Bool:
		return strconv.AppendBool(dst, v.Bool())
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		return strconv.AppendInt(dst, v.Int(), 10)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint:
		return strconv.AppendUint(dst, v.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return strconv.AppendFloat(dst, v.Float(), 'g', -1, 64)
	case reflect.Array: // [16]byte: a Kafka Uuid
		var u [16]byte
		reflect.Copy(reflect.ValueOf(u[:]), v)
		return appendString(dst, base64.RawURLEncoding.EncodeToString(u[:]))
	case reflect.Slice:
		if v.IsNil() {
			return append(dst, "null"...)
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			dst = append(dst, '"')
			dst = base64.StdEncoding.AppendEncode(dst, v.Bytes())
			return append(dst, '"')
		}
		dst = append(dst, '[')
		for i := range v.Len() {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendValue(dst, v.Index(i), field)
		}
		return append(dst, ']')
	}
	return append(dst, "null"...)
}

func appendStruct(dst []byte, v reflect.Value) []byte {
	t := v.Type()
	dst = append(dst, '{')
	first := true
	key := func(name string) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendString(dst, name)
		dst = append(dst, ':')
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Name == "Version" || f.Name == "UnknownTags" {
			continue
		}
		id := t.Name() + "." + f.Name
		name := kafkaName(t.Name(), f.Name)
		fv := v.Field(i)
		switch {
		case recordFields[id]:
			key(name + "SizeInBytes")
			dst = strconv.AppendInt(dst, int64(fv.Len()), 10)
			continue
		case secretFields[id]:
			key(name)
			if isNil(fv) {
				dst = append(dst, "null"...)
			} else {
				dst = appendString(dst, redactedValue)
			}
			continue
		}
		key(name)
		dst = appendValue(dst, fv, id)
		if dec := decodedFields[id]; dec != nil {
			if d := dec(fv.Bytes()); d != nil {
				if b, err := json.Marshal(d); err == nil {
					key(name + "Decoded")
					dst = append(dst, b...)
				}
			}
		}
	}
	return append(dst, '}')
}

func isNil(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Slice:
		return v.IsNil()
	}
	return false
}

// appendString writes a JSON string; invalid UTF-8 is replaced, as
// encoding/json does.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\r':
				dst = append(dst, '\\', 'r')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigit[c>>4], hexDigit[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexDigit = "0123456789abcdef"

// Kafka request and response types by key, for decoding captured bodies.
func newBody(key int16, response bool) any {
	if response {
		if r := kmsg.ResponseForKey(key); r != nil {
			return r
		}
		return nil
	}
	if r := kmsg.RequestForKey(key); r != nil {
		return r
	}
	return nil
}
