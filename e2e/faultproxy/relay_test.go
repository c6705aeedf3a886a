package faultproxy

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// echoServer answers each line with itself until the test ends.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

// roundTrip sends a line through addr's connection c and reads it back.
func roundTrip(c net.Conn, line string) (string, error) {
	if _, err := c.Write([]byte(line + "\n")); err != nil {
		return "", err
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := bufio.NewReader(c).ReadString('\n')
	return got, err
}

// TestRelayDrop: a relayed connection carries bytes both ways; Drop cuts it
// and refuses new ones for its window; after the window a new connection
// works again.
func TestRelayDrop(t *testing.T) {
	r, err := StartRelay("127.0.0.1", echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c, err := net.Dial("tcp", r.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := roundTrip(c, "before"); err != nil || got != "before\n" {
		t.Fatalf("through the relay: %q, %v", got, err)
	}
	r.Drop(500 * time.Millisecond)
	if _, err := roundTrip(c, "during"); err == nil {
		t.Fatal("a relayed connection lived through Drop")
	}
	d, err := net.Dial("tcp", r.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := roundTrip(d, "refused"); err == nil {
		t.Fatal("a connection made during the drop was relayed")
	}
	d.Close()
	if r.Refused() < 2 {
		t.Fatalf("Refused() = %d, want the cut and the refused connection", r.Refused())
	}
	time.Sleep(600 * time.Millisecond)
	e, err := net.Dial("tcp", r.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if got, err := roundTrip(e, "after"); err != nil || got != "after\n" {
		t.Fatalf("after the drop: %q, %v", got, err)
	}
}
