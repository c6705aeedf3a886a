// Command forwarder is the benchmark's floor for any proxy: a plain TCP
// forwarder that knows nothing of Kafka. Each accepted connection gets one
// connection to the target and two goroutines copying the byte streams. With
// -copy the bytes go through a user-space buffer (read + write, as a proxy
// that parses frames must at least do); without it Go's TCPConn.ReadFrom
// moves them with splice(2), socket to socket inside the kernel.
//
// It works in front of a broker listener whose advertised address is the
// forwarder's own, so clients never learn the broker's address.
package main

import (
	"flag"
	"io"
	"log"
	"net"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to accept clients on")
	target := flag.String("target", "", "address to forward every connection to")
	copyMode := flag.Bool("copy", false, "copy through a user-space buffer instead of splicing")
	flag.Parse()
	if *target == "" {
		log.Fatal("forwarder: -target is required")
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("forwarder: %v", err)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatalf("forwarder: accept: %v", err)
		}
		go forward(c.(*net.TCPConn), *target, *copyMode)
	}
}

func forward(client *net.TCPConn, target string, copyMode bool) {
	up, err := net.Dial("tcp", target)
	if err != nil {
		log.Printf("forwarder: dial %s: %v", target, err)
		_ = client.Close()
		return
	}
	upstream := up.(*net.TCPConn)
	done := make(chan struct{}, 2)
	pass := func(dst, src *net.TCPConn) {
		if copyMode {
			// Hiding ReadFrom/WriteTo keeps io.CopyBuffer from splicing.
			_, _ = io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{src}, make([]byte, 1<<20))
		} else {
			_, _ = dst.ReadFrom(src)
		}
		_ = dst.CloseWrite()
		done <- struct{}{}
	}
	go pass(upstream, client)
	go pass(client, upstream)
	<-done
	<-done
	_ = client.Close()
	_ = upstream.Close()
}
