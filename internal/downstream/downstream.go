// Package downstream is the lab's own downstream service for /data/{id}: it serves study
// 002's two JSON documents, optionally after a delay, and the failures verify needs. It
// counts requests and connections so verify can prove a contender really called it and
// kept its connections alive.
package downstream

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// The study's data, byte for byte.
var (
	Data1 = []byte(`{"id":1,"value":"one","active":true,"props":["yxc","xcv","xcv"]}`)
	Data2 = []byte(`{"id":2,"value":"two","active":false,"props":["qwe","wer","ert"]}`)
)

// Paths with special answers, for verify's error cases.
const (
	FailingID = 500 // /resources/data500.json answers 500
	HangingID = 504 // /resources/data504.json answers nothing for HangFor
	// MalformedID answers 200 application/json with a body cut short: not the record.
	MalformedID = 502
	HangFor     = 10 * time.Second
)

// Server is a running downstream.
type Server struct {
	Delay       time.Duration // added before every data answer
	ln          net.Listener
	srv         *fasthttp.Server
	requests    atomic.Int64
	connections atomic.Int64
	done        chan struct{}
	closing     chan struct{}
	closeOnce   sync.Once
	closeErr    error
}

// Start listens on addr ("127.0.0.1:0" for any free port) and serves until Close.
func Start(addr string, delay time.Duration) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("downstream: %w", err)
	}
	s := &Server{Delay: delay, ln: ln, done: make(chan struct{}), closing: make(chan struct{})}
	s.srv = &fasthttp.Server{
		Handler:                       s.handle,
		Name:                          "arena-downstream",
		NoDefaultDate:                 true,
		NoDefaultContentType:          true,
		DisableHeaderNamesNormalizing: true,
		ConnState: func(_ net.Conn, st fasthttp.ConnState) {
			if st == fasthttp.StateNew {
				s.connections.Add(1)
			}
		},
	}
	go func() { _ = s.srv.Serve(ln); close(s.done) }()
	return s, nil
}

// URL is the base URL contenders get as DOWNSTREAM_URL.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Requests and Connections count what the server has seen since it started.
func (s *Server) Requests() int64    { return s.requests.Load() }
func (s *Server) Connections() int64 { return s.connections.Load() }

// Close stops listening and drops open connections; from then on a connection is refused.
// Closing twice is closing once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		close(s.closing)
		s.closeErr = s.srv.Shutdown()
		<-s.done
	})
	return s.closeErr
}

func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	s.requests.Add(1)
	var body []byte
	switch string(ctx.Path()) {
	case "/resources/data1.json":
		body = Data1
	case "/resources/data2.json":
		body = Data2
	case fmt.Sprintf("/resources/data%d.json", FailingID):
		ctx.SetStatusCode(fasthttp.StatusInternalServerError)
		ctx.SetContentType("application/json")
		ctx.SetBodyString(`{"error":"downstream failure, on purpose"}`)
		return
	case fmt.Sprintf("/resources/data%d.json", MalformedID):
		ctx.SetContentType("application/json")
		ctx.SetBody(Data1[:len(Data1)/2])
		return
	case fmt.Sprintf("/resources/data%d.json", HangingID):
		select { // a hang that Close ends, so that closing never waits for it
		case <-time.After(HangFor):
		case <-s.closing:
		}
		ctx.SetConnectionClose()
		return
	default:
		ctx.SetStatusCode(fasthttp.StatusNotFound)
		ctx.SetContentType("application/json")
		ctx.SetBodyString(`{"error":"no such resource"}`)
		return
	}
	if s.Delay > 0 {
		time.Sleep(s.Delay)
	}
	ctx.SetContentType("application/json")
	ctx.SetBody(body)
}
