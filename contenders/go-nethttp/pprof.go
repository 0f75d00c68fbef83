package main

import (
	"log"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
)

// servePprof serves net/http/pprof on addr (PPROF_ADDR, which arena sets only for
// `arena run --profile`), on a listener and mux of its own, so the contract's port and
// routes stay as they are. Only a loopback address is accepted.
func servePprof(addr string) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !(host == "127.0.0.1" || host == "localhost" || strings.HasPrefix(host, "127.")) {
		log.Fatalf("PPROF_ADDR must be a loopback host:port, got %q", addr)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatalf("pprof: cannot listen: %v", err)
	}
	log.Printf("pprof on http://%s/debug/pprof/", ln.Addr())
	go func() { log.Printf("pprof: %v", http.Serve(ln, mux)) }()
}
