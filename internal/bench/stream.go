package bench

import (
	"context"
	"time"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/stream"
)

// StreamCost is what consuming a stream costs the client.
type StreamCost struct {
	Clients          int
	Size             int
	Delivered        int64
	Seconds          float64
	PerSecond        float64
	ClientCPUSeconds float64
	ClientCores      float64 // CPU seconds per second: 1.0 is one core busy
	PerCoreSecond    float64 // messages per CPU second of the client
	NanosPerMessage  float64
	Malformed, Gaps  int64
	Latency          results.Latency
}

// StreamCostRun reads the producer at addr with the stream load's own readers (each message
// framed, parsed, checked for seq and recorded) and divides by the client's CPU time.
func StreamCostRun(ctx context.Context, addr string, clients, size int, d time.Duration) (StreamCost, error) {
	l := stream.Load{Tag: "stream", Clients: clients, Size: size, Duration: d}
	rec := load.NewRecorder(time.Now(), nil)
	cpu0 := selfCPUSeconds()
	f, err := l.Run(ctx, load.Target{Addr: addr}, rec)
	if err != nil {
		return StreamCost{}, err
	}
	out := f.(*stream.Figures)
	cpu := selfCPUSeconds() - cpu0
	c := StreamCost{Clients: clients, Size: size, Delivered: out.Delivered, Seconds: float64(out.Delivered) / out.PerSecond,
		PerSecond: out.PerSecond, ClientCPUSeconds: cpu, Malformed: out.Malformed, Gaps: out.Gaps}
	if r := rec.Results(); len(r) > 0 {
		c.Latency = results.LatencyOf(r[0].Response)
	}
	if out.Delivered > 0 && cpu > 0 {
		c.ClientCores = cpu / c.Seconds
		c.PerCoreSecond = float64(out.Delivered) / cpu
		c.NanosPerMessage = cpu * 1e9 / float64(out.Delivered)
	}
	return c, nil
}
