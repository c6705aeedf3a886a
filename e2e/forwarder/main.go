// Command forwarder is the benchmark's floor for any proxy: a plain TCP
// forwarder that knows nothing of Kafka. Each accepted connection gets one
// connection to the target and two goroutines copying the byte streams. With
// -copy the bytes go through a user-space buffer (read + write, as a proxy
// that parses frames must at least do); without it Go's TCPConn.ReadFrom
// moves them with splice(2), socket to socket inside the kernel.
//
// It works in front of a broker listener whose advertised address is the
// forwarder's own, so clients never learn the broker's address.
//
// With -tls-cert and -tls-key it terminates TLS from the clients and, with
// -target-ca, speaks TLS to the target (crypto/tls on both sides, the
// benchmark's reference for streamshift with TLS on both sides); the bytes
// then go through user space whatever -copy says.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"flag"
	"io"
	"log"
	"net"
	"os"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to accept clients on")
	target := flag.String("target", "", "address to forward every connection to")
	copyMode := flag.Bool("copy", false, "copy through a user-space buffer instead of splicing")
	certFile := flag.String("tls-cert", "", "PEM certificate to serve TLS with")
	keyFile := flag.String("tls-key", "", "PEM key of -tls-cert")
	targetCA := flag.String("target-ca", "", "PEM CA of the target's certificate: TLS to the target")
	flag.Parse()
	if *target == "" {
		log.Fatal("forwarder: -target is required")
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("forwarder: %v", err)
	}
	var serverTLS, targetTLS *tls.Config
	if *certFile != "" {
		pair, err := tls.LoadX509KeyPair(*certFile, *keyFile)
		if err != nil {
			log.Fatalf("forwarder: %v", err)
		}
		serverTLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	}
	if *targetCA != "" {
		pem, err := os.ReadFile(*targetCA)
		if err != nil {
			log.Fatalf("forwarder: %v", err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		host, _, _ := net.SplitHostPort(*target)
		targetTLS = &tls.Config{RootCAs: pool, ServerName: host, MinVersion: tls.VersionTLS12}
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatalf("forwarder: accept: %v", err)
		}
		if serverTLS != nil {
			go forwardTLS(tls.Server(c, serverTLS), *target, targetTLS)
			continue
		}
		go forward(c.(*net.TCPConn), *target, *copyMode)
	}
}

// forwardTLS copies between a TLS client and the target (over TLS when
// targetTLS is set) through user-space buffers, as crypto/tls must.
func forwardTLS(client *tls.Conn, target string, targetTLS *tls.Config) {
	var up net.Conn
	var err error
	if targetTLS != nil {
		up, err = tls.Dial("tcp", target, targetTLS)
	} else {
		up, err = net.Dial("tcp", target)
	}
	if err != nil {
		log.Printf("forwarder: dial %s: %v", target, err)
		_ = client.Close()
		return
	}
	done := make(chan struct{}, 2)
	pass := func(dst, src net.Conn) {
		_, _ = io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{src}, make([]byte, 1<<20))
		done <- struct{}{}
	}
	go pass(up, client)
	go pass(client, up)
	<-done
	_ = client.Close()
	_ = up.Close()
	<-done
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
