package capture

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/streamshift/streamshift/coordinator/streams"
	"github.com/streamshift/streamshift/migration"
)

// Options configure a Recorder. The zero value records nothing until a
// group is started at runtime (its flight recorder only).
type Options struct {
	// Instance names this streamshift in every line (its proxy id).
	Instance string
	// File is the capture file; empty: no capture file.
	File string
	// Groups, ClientIDs and APIKeys filter what the file gets: an exchange
	// is written when its request names one of Groups (any when empty),
	// its client id is one of ClientIDs (any when empty) and its key is
	// one of APIKeys (when empty: the group APIs if Groups is set, else
	// every API).
	Groups, ClientIDs []string
	APIKeys           []int16
	// MaxBytes rotates the file when it would pass it; MaxFiles caps the
	// files kept, the live one included.
	MaxBytes int64
	MaxFiles int
	// FlightWindow and FlightMaxBytes bound each group's flight recorder;
	// FlightMaxGroups caps how many run at once (later groups get none).
	FlightWindow    time.Duration
	FlightMaxBytes  int
	FlightMaxGroups int
	// FlightDir receives a group's flight recorder when a takeover or
	// hand-back fails or a member is fenced, once per incident
	// (flight_files.go); empty: the capture file's directory, else the
	// system's temporary directory.
	FlightDir string
	// FlightMaxFiles and FlightMaxTotalBytes cap the flight-recorder files
	// in FlightDir, an earlier run's included: the oldest are removed
	// first. Defaults 32 and 64 MiB.
	FlightMaxFiles      int
	FlightMaxTotalBytes int64
	// FlightOnDesignedFence: a designed fence (Event.designedFence: a
	// disconnect expiry, a member replaced by identity) writes the flight
	// recorder too, at info; off, only what an operator must act on does,
	// with a warning.
	FlightOnDesignedFence bool
	Log                   zerolog.Logger
	// Registerer gets the capture's metrics; nil: none.
	Registerer prometheus.Registerer
	// Queue is how many exchanges and events wait for the writer before
	// new ones are dropped (counted). Default 8192.
	Queue int
}

// Recorder is the capture: what the proxy's tap and the coordinator's and
// migration's event hooks hand it goes, decoded, to the capture file and
// to the flight recorders of its groups. Wants and Exchange run on the
// proxy's event loops: Wants is one atomic load and a bit test, Exchange a
// non-blocking channel send; everything else happens on the recorder's
// own goroutine.
type Recorder struct {
	o     Options
	start time.Time
	keys  atomic.Pointer[keySet]
	in    chan item
	done  chan struct{}
	m     metrics

	mu sync.Mutex // guards what follows; the writer holds it per line
	// file is nil when off or stopped; fileErr says why it stopped.
	file      *fileSink
	fileErr   error
	groups    map[string]bool // the file's group filter (runtime starts added)
	clientIDs map[string]bool
	apiKeys   []int16
	flights   map[string]*flightRecorder
	closed    bool
	// conns are the live connections that carried a member request
	// (connections.go); the writer's goroutine's alone. Their closes are
	// not queued while nothing is captured, so the writer forgets them
	// all when the capture was off since (offs counts the times it went
	// off; connsOffs is the writer's count), and keeps at most
	// maxMemberConns (a close dropped on a full queue leaves one behind).
	conns     map[uint64]*memberConn
	offs      atomic.Uint64
	connsOffs uint64
}

type item struct {
	x      *Exchange
	ev     *Event
	closed *ConnClose
}

// keySet is a bitmap of API keys.
type keySet [4]uint64

func (k *keySet) set(key int16) {
	if key >= 0 && int(key) < 256 {
		k[key>>6] |= 1 << (key & 63)
	}
}

// New opens the capture file, if any, and starts the writer.
func New(o Options) (*Recorder, error) {
	if o.MaxFiles <= 0 {
		o.MaxFiles = 5
	}
	if o.FlightWindow <= 0 {
		o.FlightWindow = 5 * time.Minute
	}
	if o.FlightMaxBytes <= 0 {
		o.FlightMaxBytes = 2 << 20
	}
	if o.FlightMaxGroups <= 0 {
		o.FlightMaxGroups = 32
	}
	if o.FlightMaxFiles <= 0 {
		o.FlightMaxFiles = 32
	}
	if o.FlightMaxTotalBytes <= 0 {
		o.FlightMaxTotalBytes = 64 << 20
	}
	if o.Queue <= 0 {
		o.Queue = 8192
	}
	if o.FlightDir == "" {
		o.FlightDir = os.TempDir()
		if o.File != "" {
			o.FlightDir = filepath.Dir(o.File)
		}
	}
	r := &Recorder{o: o, start: time.Now(), in: make(chan item, o.Queue), done: make(chan struct{}),
		groups: set(o.Groups), clientIDs: set(o.ClientIDs), apiKeys: o.APIKeys, flights: map[string]*flightRecorder{},
		conns: map[uint64]*memberConn{}}
	r.m = newMetrics(o.Registerer)
	if o.File != "" {
		f, err := openFileSink(o.File, o.MaxBytes, o.MaxFiles, func() []byte {
			l := headerLine(o.Instance, r.start)
			return r.marshal(nil, &l)
		})
		if err != nil {
			return nil, err
		}
		r.file = f
		r.m.fileOn.Set(1)
	}
	r.updateKeys()
	go r.run()
	return r, nil
}

func set(s []string) map[string]bool {
	m := map[string]bool{}
	for _, v := range s {
		if v = strings.TrimSpace(v); v != "" {
			m[v] = true
		}
	}
	return m
}

// Wants says whether exchanges of key are captured now: the proxy copies
// frames only then.
func (r *Recorder) Wants(key int16) bool {
	k := r.keys.Load()
	return k != nil && key >= 0 && int(key) < 256 && k[key>>6]&(1<<(key&63)) != 0
}

// Exchange queues one exchange; it never blocks (a full queue drops it,
// counted in streamshift_capture_dropped_total).
func (r *Recorder) Exchange(x *Exchange) {
	select {
	case r.in <- item{x: x}:
	default:
		r.m.dropped.Inc()
	}
}

// Event queues a coordinator or migration event of a group.
func (r *Recorder) Event(e Event) {
	if e.At.IsZero() {
		e.At = time.Now()
	}
	r.mu.Lock()
	switch e.Kind {
	case migration.EventTakeoverStarted, migration.EventHandBackStarted:
		// A group in a migration gets a flight recorder.
		if fr := r.flight(e.Group, false); fr != nil {
			fr.until = time.Time{}
		}
		r.updateKeysLocked()
	case migration.EventHandBackDone:
		// The migration is over: its recorder stays one window more.
		if fr := r.flights[e.Group]; fr != nil && !fr.pinned {
			fr.until = e.At.Add(r.o.FlightWindow)
		}
	case streams.EventClassicGroupSynced:
		// The hand-back settled (every task runs again on the broker):
		// the recorder, which holds it, stays one window from then.
		if fr := r.flights[e.Group]; fr != nil && !fr.pinned && !fr.until.IsZero() {
			fr.until = e.At.Add(r.o.FlightWindow)
		}
	}
	wanted := r.file != nil || r.flights[e.Group] != nil
	r.mu.Unlock()
	if !wanted {
		return
	}
	select {
	case r.in <- item{ev: &e}:
	default:
		r.m.dropped.Inc()
	}
}

// Close stops the writer after what is queued and closes the file.
func (r *Recorder) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.keys.Store(nil)
	r.mu.Unlock()
	close(r.in)
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.file != nil {
		err := r.file.close()
		r.file = nil
		return err
	}
	return nil
}

// updateKeys recomputes which keys the tap copies: the file's API filter
// while the file is on, and the group APIs while a flight recorder runs.
func (r *Recorder) updateKeys() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.updateKeysLocked()
}

func (r *Recorder) updateKeysLocked() {
	var k keySet
	any := false
	if r.file != nil {
		any = true
		switch {
		case len(r.apiKeys) > 0:
			for _, key := range r.apiKeys {
				k.set(key)
			}
		case len(r.groups) > 0:
			for _, key := range groupKeys {
				k.set(int16(key))
			}
		default:
			k = keySet{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
		}
	}
	if len(r.flights) > 0 {
		any = true
		for _, key := range groupKeys {
			k.set(int16(key))
		}
	}
	if !any || r.closed {
		if r.keys.Swap(nil) != nil {
			r.offs.Add(1)
		}
		return
	}
	r.keys.Store(&k)
}

func (r *Recorder) run() {
	defer close(r.done)
	var buf []byte
	for it := range r.in {
		if offs := r.offs.Load(); offs != r.connsOffs {
			clear(r.conns)
			r.connsOffs = offs
		}
		switch {
		case it.closed != nil:
			buf = r.closeConn(it.closed, buf)
		case it.x != nil:
			d := decodeExchange(it.x, r.o.Instance, r.start)
			buf = r.noteConn(d, it.x, buf)
			buf = r.marshal(buf[:0], &d.line)
			r.writeExchange(d, buf)
		default:
			l := eventLine(it.ev, r.o.Instance, r.start)
			buf = r.marshal(buf[:0], &l)
			r.writeEvent(it.ev, buf)
		}
	}
}

func (r *Recorder) marshal(dst []byte, l *Line) []byte {
	b, err := json.Marshal(l)
	if err != nil {
		r.o.Log.Error().Err(err).Msg("capture line not encodable; skipped")
		return dst
	}
	dst = append(dst, b...)
	return append(dst, '\n')
}

func eventLine(e *Event, instance string, start time.Time) Line {
	return Line{Type: "event", Wall: e.At, MonoNs: e.At.Sub(start).Nanoseconds(), Instance: instance,
		Event: e.Kind, Group: e.Group, Member: e.Member, Reason: e.Reason, Fields: e.Fields, Message: e.Message}
}

func (r *Recorder) writeExchange(d *decoded, line []byte) {
	if len(line) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.file != nil && r.fileWants(d) {
		r.writeFile(line)
	}
	for _, g := range d.line.Groups {
		if fr := r.flights[g]; fr != nil {
			fr.add(d.line.Wall, slices.Clone(line))
		}
	}
	r.expireLocked(d.line.Wall)
	r.m.flightBytes.Set(float64(r.flightMemoryLocked()))
}

// expireLocked drops the flight recorders of migrations over for a window.
func (r *Recorder) expireLocked(now time.Time) {
	n := len(r.flights)
	for g, fr := range r.flights {
		if !fr.until.IsZero() && now.After(fr.until) {
			delete(r.flights, g)
		}
	}
	if len(r.flights) != n {
		r.updateKeysLocked()
	}
}

func (r *Recorder) fileWants(d *decoded) bool {
	if len(r.apiKeys) > 0 && !slices.Contains(r.apiKeys, *d.line.APIKey) {
		return false
	}
	if len(r.clientIDs) > 0 && !r.clientIDs[d.line.ClientID] {
		return false
	}
	if len(r.groups) > 0 && len(d.line.Groups) > 0 {
		for _, g := range d.line.Groups {
			if r.groups[g] {
				return true
			}
		}
		return false
	}
	// An API without groups is here because the API filter asked for it.
	return len(r.groups) == 0 || len(r.apiKeys) > 0
}

func (r *Recorder) writeEvent(e *Event, line []byte) {
	if len(line) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.file != nil && (len(r.groups) == 0 || r.groups[e.Group]) {
		r.writeFile(line)
	}
	fr := r.flights[e.Group]
	if fr == nil {
		return
	}
	fr.add(e.At, slices.Clone(line))
	switch {
	case e.failure(r.o.FlightOnDesignedFence):
		if !fr.flightIncident(e.At, r.o.FlightWindow) {
			r.dumpLocked(fr, e)
		}
	case e.Kind == migration.EventTakeoverDone || e.Kind == migration.EventHandBackDone:
		if fr.incidentFailures > 1 {
			r.o.Log.Info().Str("group", fr.group).Int("failures", fr.incidentFailures).Str("event", e.Kind).
				Msg("flight recorder: the group's incident is over; its failures after the first wrote no file")
		}
		fr.endIncident()
	}
}

func (r *Recorder) writeFile(line []byte) {
	if err := r.file.write(line); err != nil {
		// A full disk (or any failed write) stops the capture; the
		// proxy keeps serving.
		r.o.Log.Error().Err(err).Str("file", r.o.File).Msg("capture file stopped: the proxy keeps serving without it")
		r.file.close()
		r.file, r.fileErr = nil, err
		r.m.fileOn.Set(0)
		r.m.stopped.Inc()
		r.updateKeysLocked()
		return
	}
	r.m.lines.Inc()
	r.m.bytes.Add(float64(len(line)))
}

func sanitize(s string) string {
	return strings.Map(func(c rune) rune {
		if c == '/' || c == '\\' || c == 0 {
			return '_'
		}
		return c
	}, s)
}

// flight returns the group's flight recorder, started if there is room.
func (r *Recorder) flight(group string, pinned bool) *flightRecorder {
	if group == "" {
		return nil
	}
	fr := r.flights[group]
	if fr == nil {
		if len(r.flights) >= r.o.FlightMaxGroups {
			r.o.Log.Warn().Str("group", group).Int("max_groups", r.o.FlightMaxGroups).Msg("no flight recorder for the group: the cap is reached")
			return nil
		}
		fr = &flightRecorder{group: group, maxBytes: r.o.FlightMaxBytes, window: r.o.FlightWindow}
		r.flights[group] = fr
	}
	fr.pinned = fr.pinned || pinned
	return fr
}

func (r *Recorder) flightMemoryLocked() int {
	n := 0
	for _, fr := range r.flights {
		n += fr.memory()
	}
	return n
}

// StartGroup captures a group at runtime: its flight recorder, and its
// lines in the capture file when the file is filtered by group.
func (r *Recorder) StartGroup(group string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.flight(group, true) == nil {
		return fmt.Errorf("group %q: no flight recorder (empty id, or capture.flight-max-groups reached)", group)
	}
	if len(r.groups) > 0 {
		r.groups[group] = true
	}
	r.updateKeysLocked()
	return nil
}

// StopGroup ends a group's runtime capture and drops its flight recorder.
func (r *Recorder) StopGroup(group string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.flights, group)
	if len(r.groups) > 1 {
		delete(r.groups, group)
	}
	r.updateKeysLocked()
}

// FlightRecorder returns a group's flight recorder as JSON lines.
func (r *Recorder) FlightRecorder(group string) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fr := r.flights[group]
	if fr == nil {
		return nil, false
	}
	return fr.snapshot(time.Now()), true
}

// Status is what the admin API lists.
type Status struct {
	File        string         `json:"file,omitempty"`
	FileOn      bool           `json:"fileOn"`
	FileError   string         `json:"fileError,omitempty"`
	Groups      []string       `json:"groups,omitempty"`
	ClientIDs   []string       `json:"clientIds,omitempty"`
	APIKeys     []int16        `json:"apiKeys,omitempty"`
	Flight      []FlightStatus `json:"flightRecorders"`
	FlightBytes int            `json:"flightRecorderBytes"`
}

// FlightStatus is one group's flight recorder.
type FlightStatus struct {
	Group  string `json:"group"`
	Lines  int    `json:"lines"`
	Bytes  int    `json:"bytes"`
	Pinned bool   `json:"startedOnRequest"`
}

func (r *Recorder) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Status{File: r.o.File, FileOn: r.file != nil, APIKeys: r.apiKeys, Flight: []FlightStatus{}, FlightBytes: r.flightMemoryLocked()}
	if r.fileErr != nil {
		s.FileError = r.fileErr.Error()
	}
	for g := range r.groups {
		s.Groups = append(s.Groups, g)
	}
	for c := range r.clientIDs {
		s.ClientIDs = append(s.ClientIDs, c)
	}
	slices.Sort(s.Groups)
	slices.Sort(s.ClientIDs)
	for _, fr := range r.flights {
		s.Flight = append(s.Flight, FlightStatus{Group: fr.group, Lines: fr.len(), Bytes: fr.bytes, Pinned: fr.pinned})
	}
	slices.SortFunc(s.Flight, func(a, b FlightStatus) int { return strings.Compare(a.Group, b.Group) })
	return s
}

// ParseAPIKeys reads capture.api-keys: numbers or Kafka's API names
// (JoinGroup, 11).
func ParseAPIKeys(list []string) ([]int16, error) {
	var out []int16
	for _, s := range list {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		var n int16
		if _, err := fmt.Sscan(s, &n); err == nil && kmsg.NameForKey(n) != "Unknown" {
			out = append(out, n)
			continue
		}
		found := false
		for k := int16(0); k < 256; k++ {
			if strings.EqualFold(kmsg.NameForKey(k), s) {
				out, found = append(out, k), true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown API %q (want a key or a name such as JoinGroup)", s)
		}
	}
	return out, nil
}
