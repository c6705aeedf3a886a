package main

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/classicstreams"
)

// The hostile-request suite's requests: every key streamshift serves or
// rewrites, at every version kmsg knows, built from kmsg's own structs with
// each field drawn from values that broke proxies before (extreme ints,
// empty and invalid UTF-8 strings, ids of the served group, lists of one
// entry repeated thousands of times), the embedded classic Streams
// metadata taken from real Kafka Streams bytes (classicstreams' golden
// vectors) and then lied about (lengths and counts overwritten, cut short,
// bytes flipped), and finally some frames cut or flipped at the byte level.

// hostileKeys are the keys streamshift handles itself: the routes' keys
// (route/routes.go, with the migration on) and what the proxy rewrites.
var hostileKeys = []kmsg.Key{
	kmsg.Metadata, kmsg.OffsetCommit, kmsg.OffsetFetch, kmsg.FindCoordinator, kmsg.JoinGroup, kmsg.Heartbeat,
	kmsg.LeaveGroup, kmsg.SyncGroup, kmsg.DescribeGroups, kmsg.ListGroups, kmsg.ApiVersions, kmsg.TxnOffsetCommit,
	kmsg.DescribeConfigs, kmsg.DeleteGroups, kmsg.IncrementalAlterConfigs, kmsg.OffsetDelete,
	kmsg.DescribeCluster, kmsg.StreamsGroupHeartbeat, kmsg.StreamsGroupDescribe,
}

// hostileGroup is the streams group the suite serves (joined first, with a
// 10 kB endpoint), so describes and commits reach a real group.
const hostileGroup = "hz-app"

type hostileGen struct {
	r     *rand.Rand
	metas [][]byte // classic Streams metadata of real clients
	// left is how many more list entries the request being built may
	// have: repeats nest (a repeated topic of repeated partitions), and
	// a request past max-intercepted-bytes is refused from its size
	// prefix anyway.
	left int
	// inRepeat: the entry being filled is repeated; it gets no long
	// string, no large metadata and no repeat of its own, so a frame
	// stays within tens of MB.
	inRepeat bool
}

// hostileEntries bounds the list entries of one request.
const hostileEntries = 20_000

func newHostileGen(t *testing.T, seed uint64) *hostileGen {
	t.Helper()
	g := &hostileGen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	files, err := filepath.Glob("../../classicstreams/testdata/vectors-*/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("classicstreams vectors: %v (%d files)", err, len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Kind string `json:"kind"`
			Hex  string `json:"hex"`
		}
		if json.Unmarshal(data, &v) != nil {
			continue
		}
		b, err := hex.DecodeString(v.Hex)
		if err != nil {
			continue
		}
		g.metas = append(g.metas, b)
		if v.Kind == "subscription" {
			// SubscriptionInfo travels as the user data of a consumer
			// subscription, as a Streams member sends it.
			s := classicstreams.ConsumerSubscription{Version: 3, Topics: []string{"words"}, UserData: b, GenerationID: -1}
			g.metas = append(g.metas, s.Encode())
		}
	}
	return g
}

func (g *hostileGen) chance(p float64) bool { return g.r.Float64() < p }

func (g *hostileGen) pick(s []string) string { return s[g.r.IntN(len(s))] }

var (
	hostileGroups  = []string{hostileGroup, hostileGroup, "hz-classic", "", "bad-\xff\xfe-group", "canary-0", "g\x00nul", "grüppe-€"}
	hostileMembers = []string{"", "m-1", "member-\xc3", "\xed\xa0\x80", "streams-app-1-0123456789abcdef"}
	hostileTopics  = []string{"words", "canary", "in", "", "no-such-topic", "t\xff", "__consumer_offsets"}
	hostileStrings = []string{"", "x", "stream", "consumer", "range", "\xff\xfe", "streams.num.standby.replicas", "group.streams.session.timeout.ms", "0", "1_0"}
)

func (g *hostileGen) str(field string) string {
	if !g.inRepeat && g.chance(0.03) {
		return strings.Repeat("z", 1+g.r.IntN(20000))
	}
	switch {
	case strings.Contains(field, "Group") || field == "ResourceName" || field == "CoordinatorKey" || field == "Key":
		return g.pick(hostileGroups)
	case strings.Contains(field, "Member") || strings.Contains(field, "Instance") || strings.Contains(field, "Process"):
		return g.pick(hostileMembers)
	case strings.Contains(field, "Topic"):
		return g.pick(hostileTopics)
	}
	return g.pick(hostileStrings)
}

func (g *hostileGen) integer(bits int) int64 {
	lo, hi := int64(-1)<<(bits-1), int64(1)<<(bits-1)-1
	switch g.r.IntN(8) {
	case 0:
		return 0
	case 1:
		return -1
	case 2:
		return hi
	case 3:
		return lo
	case 4:
		return 1
	default:
		return g.r.Int64N(1000) - 10
	}
}

// metadata is classic Streams metadata as a member sends it, or lied about.
func (g *hostileGen) metadata() []byte {
	if g.inRepeat || g.chance(0.1) {
		b := make([]byte, g.r.IntN(64))
		for i := range b {
			b[i] = byte(g.r.IntN(256))
		}
		return b
	}
	b := append([]byte(nil), g.metas[g.r.IntN(len(g.metas))]...)
	if len(b) == 0 || g.chance(0.3) {
		return b
	}
	switch g.r.IntN(4) {
	case 0: // a length or count that lies
		if len(b) >= 4 {
			at := g.r.IntN(len(b) - 3)
			lie := []uint32{0x7fffffff, 0xffffffff, 0x80000000, 0x00010000, uint32(len(b))}[g.r.IntN(5)]
			binary.BigEndian.PutUint32(b[at:], lie)
		}
	case 1: // cut short
		b = b[:g.r.IntN(len(b))]
	case 2: // flipped
		for range 1 + g.r.IntN(4) {
			b[g.r.IntN(len(b))] ^= byte(1 + g.r.IntN(255))
		}
	default: // a 2-byte length that lies
		if len(b) >= 2 {
			binary.BigEndian.PutUint16(b[g.r.IntN(len(b)-1):], 0xffff)
		}
	}
	return b
}

// fill gives every exported field of v a hostile value of its type.
func (g *hostileGen) fill(v reflect.Value, field string, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(g.str(field))
	case reflect.Bool:
		v.SetBool(g.chance(0.5))
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(g.integer(v.Type().Bits()))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(g.integer(v.Type().Bits())))
	case reflect.Float64:
		v.SetFloat([]float64{0, -1, math.MaxFloat64, math.Inf(1), math.NaN()}[g.r.IntN(5)])
	case reflect.Pointer:
		if depth > 6 || g.chance(0.3) {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		g.fill(p.Elem(), field, depth+1)
		v.Set(p)
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() || f.Name == "Version" || f.Name == "UnknownTags" {
				continue
			}
			g.fill(v.Field(i), f.Name, depth+1)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			if strings.Contains(field, "Metadata") || strings.Contains(field, "Assignment") || strings.Contains(field, "UserData") {
				v.SetBytes(g.metadata())
			} else if !g.chance(0.2) {
				v.SetBytes(g.metadata())
			}
			return
		}
		if depth > 6 || g.chance(0.1) {
			v.SetZero() // nil: null where the field is nullable
			return
		}
		n := min(g.r.IntN(4), g.left)
		repeat := 1
		if !g.inRepeat && g.chance(0.08) && n > 0 {
			repeat = min(100+g.r.IntN(3000), g.left/n) // one entry many times
		}
		g.left -= n * repeat
		s := reflect.MakeSlice(v.Type(), 0, n*repeat)
		for range n {
			e := reflect.New(v.Type().Elem()).Elem()
			was := g.inRepeat
			g.inRepeat = was || repeat > 1
			g.fill(e, field, depth+1)
			g.inRepeat = was
			for range repeat {
				s = reflect.Append(s, e)
			}
		}
		v.Set(s)
	}
}

// request is a request of key at a random version with hostile fields.
func (g *hostileGen) request(key kmsg.Key) kmsg.Request {
	req := kmsg.RequestForKey(int16(key))
	v := int16(g.r.IntN(int(req.MaxVersion()) + 1))
	g.left = hostileEntries
	g.fill(reflect.ValueOf(req).Elem(), "", 0)
	req.SetVersion(v)
	return req
}

// next is the key and frame of the next request.
func (g *hostileGen) next(corr int32) (kmsg.Key, []byte) {
	key := hostileKeys[g.r.IntN(len(hostileKeys))]
	return key, g.frame(g.request(key), corr)
}

// frame is req as a client sends it, under a client id that may be
// hostile too, and sometimes cut or flipped after encoding.
func (g *hostileGen) frame(req kmsg.Request, corr int32) []byte {
	var clientID *string
	if !g.chance(0.1) {
		id := g.pick([]string{"hostile", "", "client-\xff", "kgo"})
		clientID = &id
	}
	f := requestFrame(req, corr, clientID)
	if !g.chance(0.15) || len(f) <= 12 {
		return f
	}
	body := 12 // size, key, version, correlation id
	switch g.r.IntN(3) {
	case 0: // cut short, with a size prefix that says so
		f = f[:body+g.r.IntN(len(f)-body)]
	case 1: // flipped
		for range 1 + g.r.IntN(4) {
			f[body+g.r.IntN(len(f)-body)] ^= byte(1 + g.r.IntN(255))
		}
	default: // a length inside that lies
		if len(f)-body >= 4 {
			at := body + g.r.IntN(len(f)-body-3)
			binary.BigEndian.PutUint32(f[at:], []uint32{0x7fffffff, 0xffffffff, 0x80000000}[g.r.IntN(3)])
		}
	}
	binary.BigEndian.PutUint32(f, uint32(len(f)-4))
	return f
}

// requestFrame encodes req as a request frame: size, header (v1, or v2
// for a flexible version), body.
func requestFrame(req kmsg.Request, corr int32, clientID *string) []byte {
	f := []byte{0, 0, 0, 0}
	f = binary.BigEndian.AppendUint16(f, uint16(req.Key()))
	f = binary.BigEndian.AppendUint16(f, uint16(req.GetVersion()))
	f = binary.BigEndian.AppendUint32(f, uint32(corr))
	f = kbin.AppendNullableString(f, clientID)
	if req.IsFlexible() {
		f = append(f, 0)
	}
	f = req.AppendTo(f)
	binary.BigEndian.PutUint32(f, uint32(len(f)-4))
	return f
}

// servedJoin is a valid first StreamsGroupHeartbeat of hostileGroup whose
// member advertises an endpoint of hostBytes bytes.
func servedJoin(member string, hostBytes int) kmsg.Request {
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Version, req.Group, req.MemberID, req.EndpointInformationEpoch, req.RebalanceTimeoutMillis = 0, hostileGroup, member, -1, 30000
	pid := "process-" + member
	req.ProcessID = &pid
	req.UserEndpoint = &kmsg.StreamsGroupHeartbeatRequestUserEndpoint{Host: strings.Repeat("h", hostBytes), Port: 9092}
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	st := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	st.SubtopologyID, st.SourceTopics = "0", []string{"words"}
	topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{st}
	req.Topology = &topo
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
	return req
}
