package proxy

import (
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/streamshift/streamshift/internal/testlog"
)

// TestConnLogLevel: a client's connect and disconnect lines are info by
// default (run), debug with ConnLogDebug (the demo).
func TestConnLogLevel(t *testing.T) {
	c := newCluster(t)
	for _, tc := range []struct {
		debug bool
		want  string
	}{{false, "info"}, {true, "debug"}} {
		var buf testlog.Buffer
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
