package bench

import (
	"context"
	"fmt"
	"time"
)

// Server is one started server a floor measures.
type Server struct {
	Name string
	Addr string
	Pid  int
}

// FloorRound is one wrk round against one of the servers.
type FloorRound struct {
	Server string
	Round
}

// Floor is a contender beside its stack's minimal example: what the stack reaches with
// nothing but the path, the floor the contender's own figure must not fall below.
type Floor struct {
	Path        string
	Connections int
	Seconds     float64
	Rounds      []FloorRound
}

// Mean is the mean requests/s and server CPU of one server's rounds.
func (f Floor) Mean(server string) (rps, serverCPU float64) {
	var n float64
	for _, r := range f.Rounds {
		if r.Server == server {
			rps += r.RPS
			serverCPU += r.ServerCPU
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return rps / n, serverCPU / n
}

// MeasureFloor warms each server with wrk, then alternates wrk rounds between them (one
// thread, the same connections, the same client CPUs), so drift in the machine hits all
// alike. The servers share their CPUs, each idle while another is measured.
func MeasureFloor(ctx context.Context, servers []Server, path string, conns int, d, warmup time.Duration, rounds int, clientCPUs string) (Floor, error) {
	wrk, err := WrkPath()
	if err != nil {
		return Floor{}, err
	}
	res := Floor{Path: path, Connections: conns, Seconds: d.Seconds()}
	if warmup > 0 {
		for _, s := range servers {
			if _, err := runWrk(ctx, wrk, s.Addr, path, conns, warmup, clientCPUs, s.Pid); err != nil {
				return res, fmt.Errorf("%s: %w", s.Name, err)
			}
		}
	}
	for i := 0; i < rounds; i++ {
		for _, s := range servers {
			r, err := runWrk(ctx, wrk, s.Addr, path, conns, d, clientCPUs, s.Pid)
			if err != nil {
				return res, fmt.Errorf("%s: %w", s.Name, err)
			}
			res.Rounds = append(res.Rounds, FloorRound{Server: s.Name, Round: r})
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
		}
	}
	return res, nil
}
