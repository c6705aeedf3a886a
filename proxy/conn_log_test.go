package proxy

import (
	"bytes"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// lockedBuffer is a log sink written from the event loops and read by the
// test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestConnLogLevel: a client's connect and disconnect lines are info by
// default (run), debug with ConnLogDebug (the demo).
func TestConnLogLevel(t *testing.T) {
	c := newCluster(t)
	for _, tc := range []struct {
		debug bool
		want  string
	}{{false, "info"}, {true, "debug"}} {
		var buf lockedBuffer
		p := startProxy(t, c.ListenAddrs(), func(o *Options) {
			o.Log = zerolog.New(&buf).Level(zerolog.DebugLevel)
			o.ConnLogDebug = tc.debug
		})
		conn, err := net.Dial("tcp", p.addr)
		if err != nil {
			t.Fatal(err)
		}
		conn.Close()
		levels := map[string]string{}
		for levels["client disconnected"] == "" {
			for _, line := range strings.Split(buf.String(), "\n") {
				var e struct{ Level, Message string }
				if json.Unmarshal([]byte(line), &e) == nil && strings.HasPrefix(e.Message, "client ") {
					levels[e.Message] = e.Level
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
		p.stop()
		if levels["client connected"] != tc.want || levels["client disconnected"] != tc.want {
			t.Errorf("ConnLogDebug %v: levels %v, want %s", tc.debug, levels, tc.want)
		}
	}
}
