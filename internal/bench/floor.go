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
// nothing but the path and what it needs, the floor the contender's own figure must not fall below.
type Floor struct {
	Path        string
	Connections int
	Seconds     float64
	Rounds      []FloorRound
}

// Mean is the mean requests/s and server CPU of one server's rounds.
func (f Floor) Mean(server string) (rps, serverCPU float64) {
	return meanOf(f.Rounds, func(r FloorRound) (bool, float64, float64) { return r.Server == server, r.RPS, r.ServerCPU })
}

// FloorPlan is how a floor is measured: each server warmed for Warmup, then Rounds rounds
// of Round each, alternating, with wrk's one thread on ClientCPUs.
type FloorPlan struct {
	Path        string
	Connections int
	Round       time.Duration
	Warmup      time.Duration
	Rounds      int
	ClientCPUs  string
	// Measured, when set, is called as the first counted round starts (true) and as the last
	// one ends (false): a profile's window, which leaves the warm-up out.
	Measured func(begin bool)
}

// MeasureFloor warms each server with wrk, then alternates wrk rounds between them (one
// thread, the same connections, the same client CPUs), so drift in the machine hits all
// alike. The servers share their CPUs, each idle while another is measured.
func MeasureFloor(ctx context.Context, servers []Server, p FloorPlan) (Floor, error) {
	wrk, err := WrkPath()
	if err != nil {
		return Floor{}, err
	}
	res := Floor{Path: p.Path, Connections: p.Connections, Seconds: p.Round.Seconds()}
	if p.Warmup > 0 {
		for _, s := range servers {
			if _, err := runWrk(ctx, wrk, s.Addr, p.Path, p.Connections, p.Warmup, p.ClientCPUs, s.Pid); err != nil {
				return res, fmt.Errorf("%s: %w", s.Name, err)
			}
		}
	}
	if p.Measured != nil {
		p.Measured(true)
		defer p.Measured(false)
	}
	for i := 0; i < p.Rounds; i++ {
		for _, s := range servers {
			r, err := counted(runWrk(ctx, wrk, s.Addr, p.Path, p.Connections, p.Round, p.ClientCPUs, s.Pid))
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
