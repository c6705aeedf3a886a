package capture

import (
	"encoding/binary"
	"errors"
	"reflect"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/route"
)

// Exchange is one request and its response as the client saw them, as the
// proxy's tap hands them over (frames with their size prefix).
type Exchange struct {
	ConnID                        uint64
	ClientAddress                 string
	ClientID                      string
	SoftwareName, SoftwareVersion string
	Key, Version                  int16
	CorrelationID                 int32
	Request, Response             []byte
	Local                         bool
	Received, Answered            time.Time
	// Opened is when the client connection opened (zero: unknown).
	Opened time.Time
}

// decoded is an exchange with its bodies decoded, before it is filtered.
type decoded struct {
	line     Line
	req      kmsg.Request
	resp     kmsg.Response
	clientID string
}

func decodeExchange(x *Exchange, instance string, start time.Time) *decoded {
	key := x.Key
	d := &decoded{line: Line{
		Type: "exchange", Wall: x.Answered, MonoNs: x.Answered.Sub(start).Nanoseconds(), Instance: instance,
		ConnID: x.ConnID, ClientAddress: x.ClientAddress, ClientID: x.ClientID,
		ClientSoftwareName: x.SoftwareName, ClientSoftwareVersion: x.SoftwareVersion,
		APIKey: &key, APIName: kmsg.NameForKey(x.Key), APIVersion: x.Version, CorrelationID: x.CorrelationID,
		Local: x.Local,
	}}
	if !x.Received.IsZero() {
		d.line.LatencyMs = float64(x.Answered.Sub(x.Received).Microseconds()) / 1000
	}
	var errs []error
	if req := kmsg.RequestForKey(x.Key); req != nil && len(x.Request) >= 4 {
		req.SetVersion(x.Version)
		body, clientID, err := requestBody(x.Request[4:], req.IsFlexible() && x.Key != int16(kmsg.ControlledShutdown))
		if err == nil {
			if clientID != nil {
				d.clientID = *clientID
				d.line.ClientID = *clientID
			}
			err = req.ReadFrom(body)
		}
		if err == nil {
			d.req = req
			d.line.Request = AppendBody(nil, req)
			d.line.Groups = groupsOf(req)
		} else {
			errs = append(errs, errors.New("request: "+err.Error()))
		}
	}
	if resp := kmsg.ResponseForKey(x.Key); resp != nil && len(x.Response) >= 8 {
		resp.SetVersion(x.Version)
		// ApiVersions responses keep header v0 whatever their version.
		body, err := responseBody(x.Response[4:], resp.IsFlexible() && x.Key != int16(kmsg.ApiVersions))
		if err == nil {
			err = resp.ReadFrom(body)
		}
		if err == nil {
			d.resp = resp
			d.line.Response = AppendBody(nil, resp)
			d.line.ErrorCodes = errorCodes(reflect.ValueOf(resp), nil)
			for _, c := range d.line.ErrorCodes {
				if e := kerr.ErrorForCode(c); e != nil {
					d.line.Errors = append(d.line.Errors, e.Error())
				}
			}
		} else {
			errs = append(errs, errors.New("response: "+err.Error()))
		}
	}
	if len(errs) > 0 {
		d.line.DecodeError = errors.Join(errs...).Error()
	}
	return d
}

var errShort = errors.New("header cut short")

// requestBody skips a request header (v1, or v2 with tagged fields).
func requestBody(msg []byte, flexible bool) (body []byte, clientID *string, err error) {
	if len(msg) < 10 {
		return nil, nil, errShort
	}
	n := int(int16(binary.BigEndian.Uint16(msg[8:])))
	at := 10
	if n >= 0 {
		if len(msg) < at+n {
			return nil, nil, errShort
		}
		s := string(msg[at : at+n])
		clientID = &s
		at += n
	}
	if flexible {
		if at, err = skipTags(msg, at); err != nil {
			return nil, nil, err
		}
	}
	return msg[at:], clientID, nil
}

// responseBody skips a response header (v0, or v1 with tagged fields).
func responseBody(msg []byte, flexible bool) ([]byte, error) {
	at := 4
	if flexible {
		var err error
		if at, err = skipTags(msg, at); err != nil {
			return nil, err
		}
	}
	return msg[at:], nil
}

func skipTags(b []byte, at int) (int, error) {
	n, w := binary.Uvarint(b[at:])
	if w <= 0 {
		return 0, errShort
	}
	at += w
	for range n {
		_, w := binary.Uvarint(b[at:]) // tag
		if w <= 0 {
			return 0, errShort
		}
		at += w
		size, w := binary.Uvarint(b[at:])
		if w <= 0 || uint64(len(b)-at-w) < size {
			return 0, errShort
		}
		at += w + int(size)
	}
	return at, nil
}

// errorCodes collects the distinct non-zero ErrorCode fields of a response,
// at any depth, in the order met.
func errorCodes(v reflect.Value, out []int16) []int16 {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			out = errorCodes(v.Elem(), out)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Struct {
			for i := range v.Len() {
				out = errorCodes(v.Index(i), out)
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.Name == "ErrorCode" && f.Type.Kind() == reflect.Int16 {
				if c := int16(v.Field(i).Int()); c != 0 && !contains(out, c) {
					out = append(out, c)
				}
				continue
			}
			if f.IsExported() {
				out = errorCodes(v.Field(i), out)
			}
		}
	}
	return out
}

func contains[T comparable](s []T, v T) bool {
	for _, e := range s {
		if e == v {
			return true
		}
	}
	return false
}

// groupsOf is the group ids a request is about (route.Groups, less the
// entries naming no group).
func groupsOf(req kmsg.Request) []string {
	return slices.DeleteFunc(slices.Clone(route.Groups(req)), func(g string) bool { return g == "" })
}

// groupKeys are the APIs whose requests name groups: what a capture of
// groups copies.
var groupKeys = []kmsg.Key{
	kmsg.OffsetCommit, kmsg.OffsetFetch, kmsg.FindCoordinator, kmsg.JoinGroup, kmsg.Heartbeat,
	kmsg.LeaveGroup, kmsg.SyncGroup, kmsg.DescribeGroups, kmsg.TxnOffsetCommit, kmsg.DeleteGroups,
	kmsg.OffsetDelete, kmsg.ConsumerGroupHeartbeat, kmsg.ConsumerGroupDescribe,
	kmsg.StreamsGroupHeartbeat, kmsg.StreamsGroupDescribe,
}
