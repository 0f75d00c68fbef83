package verify

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// A hold keeps many bad clients connected while /instant is timed: the server must go on
// answering at once (p99 under a second) while they hang on, and be whole when they go.
type hold struct {
	name  string
	conns int
	// feed writes to one held connection until stop closes; nil sends nothing.
	feed func(nc net.Conn, stop <-chan struct{})
}

// Timing /instant under a hold: a request every interval on a fresh connection.
const (
	holdSamples  = 100
	holdInterval = 40 * time.Millisecond
	holdP99      = time.Second
)

func holds() []hold {
	return []hold{
		{name: "slowloris: 200 connections sending a header byte a second", conns: 200, feed: slowloris},
		{name: "half-open: 200 connections that send nothing", conns: 200},
	}
}

// slowloris sends a request line, then one header byte a second, never ending the headers.
func slowloris(nc net.Conn, stop <-chan struct{}) {
	if _, err := io.WriteString(nc, "GET /instant HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "); err != nil {
		return
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			_ = nc.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := nc.Write([]byte("s")); err != nil {
				return // the server closed it: its right
			}
		}
	}
}

func (h hold) run(ctx context.Context, s *Server) Check {
	start := time.Now()
	c := Check{Group: GroupHTTP, Name: h.name + ", /instant p99 under 1 s"}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var conns []net.Conn
	defer func() {
		close(stop)
		for _, nc := range conns {
			nc.Close()
		}
		wg.Wait()
	}()
	d := net.Dialer{Timeout: 5 * time.Second}
	for range h.conns {
		nc, err := d.DialContext(ctx, "tcp", s.Addr)
		if err != nil {
			c.Detail = fmt.Sprintf("opening connection %d of %d: %v", len(conns)+1, h.conns, err)
			return c
		}
		conns = append(conns, nc)
		if h.feed != nil {
			wg.Add(1)
			go func() { defer wg.Done(); h.feed(nc, stop) }()
		}
	}
	took, err := timeInstant(ctx, s.Base())
	c.Took = time.Since(start)
	switch {
	case err != nil:
		c.Detail = fmt.Sprintf("while %d connections were held: %v", h.conns, err)
	case took > holdP99:
		c.Detail = fmt.Sprintf("/instant p99 %s while %d connections were held, want under %s", took.Round(time.Millisecond), h.conns, holdP99)
	default:
		c.OK = true
	}
	return c
}

// timeInstant asks /instant holdSamples times, each on a fresh connection, and returns the
// p99 of the answers' times; a failed request fails it.
func timeInstant(ctx context.Context, base string) (time.Duration, error) {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var times []time.Duration
	for i := range holdSamples {
		if i > 0 {
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-time.After(holdInterval):
			}
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/instant", nil)
		at := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, fmt.Errorf("request %d: %w", i+1, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || string(body) != "INSTANT" {
			return 0, fmt.Errorf("request %d: %d %q %v", i+1, resp.StatusCode, clip(body), err)
		}
		times = append(times, time.Since(at))
	}
	slices.Sort(times)
	return times[(len(times)*99+99)/100-1], nil
}
