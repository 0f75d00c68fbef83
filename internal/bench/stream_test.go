package bench

import (
	"context"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/stream"
)

// The stream benchmark reads every message of the blast producer, in order, and divides the
// client's CPU time among them.
func TestStreamCostRunCountsTheClientsCPUPerMessage(t *testing.T) {
	s, err := stream.StartServer("127.0.0.1:0", stream.ServerOptions{Backpressure: true, Blast: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := StreamCostRun(context.Background(), s.Addr(), 2, 250, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if c.Delivered < 1000 || c.Malformed != 0 || c.Gaps != 0 {
		t.Fatalf("%+v", c)
	}
	if c.ClientCPUSeconds <= 0 || c.NanosPerMessage <= 0 || c.PerCoreSecond <= 0 || c.Latency.Count != c.Delivered {
		t.Fatalf("cost not measured: %+v", c)
	}
}
