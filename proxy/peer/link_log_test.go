package peer

import (
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/streamshift/streamshift/internal/testlog"
)

// TestPeerLinkDownLogBounded: a peer that accepts and drops every attempt
// (a link retried once a second for as long as that lasts) costs one
// "link down" line per warnEvery, not one per attempt.
func TestPeerLinkDownLogBounded(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	var attempts atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			attempts.Add(1)
			_ = c.Close()
		}
	}()
	var logs testlog.Buffer
	l := NewLink(LinkOptions{Self: "origin", Peer: "owner", Addr: ln.Addr().String(), Log: zerolog.New(&logs)})
	t.Cleanup(l.Close)
	waitFor(t, "four attempts", func() error {
		if attempts.Load() < 4 {
			return errNotYet
		}
		return nil
	})
	if n := strings.Count(logs.String(), "link to a streamshift instance down"); n != 1 {
		t.Fatalf("%d attempts logged %d lines, want 1 per %s:\n%s", attempts.Load(), n, warnEvery, logs.String())
	}
}
