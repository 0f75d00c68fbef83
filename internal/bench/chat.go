package bench

import (
	"context"
	"fmt"
	"maps"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/shirou/gopsutil/v4/process"

	"github.com/arena-lab/arena/internal/chat"
	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
)

// ChatHold is what holding many idle chat users costs the client.
type ChatHold struct {
	Users       int
	Connected   int
	JoinSeconds float64
	BaseRSSMB   float64 // the client before any user
	RSSMB       float64 // with every user connected and joined
	PerUserKB   float64
	UsersPerGiB float64
	Goroutines  int
}

// HoldChatUsers connects users (rooms of roomSize) to the chat server at addr, joins them,
// each with its reader waiting as in a real run, and measures this process's memory.
func HoldChatUsers(ctx context.Context, addr string, users, roomSize int) (ChatHold, error) {
	res := ChatHold{Users: users}
	runtime.GC()
	res.BaseRSSMB = selfRSSMB()
	start := time.Now()
	conns := make([]*chat.Conn, users)
	var wg sync.WaitGroup
	gate := make(chan struct{}, 64)
	var mu sync.Mutex
	var firstErr error
	for i := 0; i < users; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			gate <- struct{}{}
			defer func() { <-gate }()
			c, err := chat.Dial(ctx, addr)
			if err == nil {
				err = c.Join(fmt.Sprintf("hold%d", i), fmt.Sprintf("room%d", i/roomSize))
			}
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				return
			}
			conns[i] = c
		}(i)
	}
	wg.Wait()
	res.JoinSeconds = time.Since(start).Seconds()
	readers := sync.WaitGroup{}
	for _, c := range conns {
		if c == nil {
			continue
		}
		res.Connected++
		readers.Add(1)
		go func(c *chat.Conn) { // a member waits for frames, as in a chat run
			defer readers.Done()
			for {
				if _, err := c.ReadRaw(); err != nil {
					return
				}
			}
		}(c)
	}
	time.Sleep(2 * time.Second) // let buffers and goroutine stacks settle
	runtime.GC()
	res.RSSMB = selfRSSMB()
	res.Goroutines = runtime.NumGoroutine()
	for _, c := range conns {
		if c != nil {
			c.Close()
		}
	}
	readers.Wait()
	if res.Connected == 0 {
		return res, fmt.Errorf("no user connected: %v", firstErr)
	}
	res.PerUserKB = (res.RSSMB - res.BaseRSSMB) * 1024 / float64(res.Connected)
	if res.PerUserKB > 0 {
		res.UsersPerGiB = (1024 - res.BaseRSSMB) * 1024 / res.PerUserKB
	}
	return res, nil
}

// ChatCost is the client's own cost per delivered message.
type ChatCost struct {
	Rooms, Users, Messages int
	Deliveries             int64
	Faults                 map[string]int64
	Seconds                float64
	ClientCPUSeconds       float64
	MicrosPerDelivery      float64
	DeliveriesPerSecond    float64
	Latency                results.Latency
}

// ChatCostRun runs a chat load against addr and divides the client's CPU time by the
// deliveries it handled (each parsed, checked and recorded).
func ChatCostRun(ctx context.Context, addr string, rooms, users, messages int, period time.Duration) (ChatCost, error) {
	l := chat.Load{Tag: "delivery", Rooms: rooms, Users: users, Messages: messages, Period: period, JoinWait: time.Second, Linger: 30 * time.Second}
	rec := load.NewRecorder(time.Now(), nil)
	cpu0 := selfCPUSeconds()
	start := time.Now()
	figures, err := l.Run(ctx, load.Target{Addr: addr}, rec)
	if err != nil {
		return ChatCost{}, err
	}
	// the join wait before the first send and the grace after the last delivery are no work
	el := time.Since(start).Seconds() - l.JoinWait.Seconds() - chat.DefaultGrace.Seconds()
	cpu := selfCPUSeconds() - cpu0
	r := rec.Results()[0]
	faults := r.Errors // transport failures, and what the deliveries got wrong
	var cell results.Cell
	if figures != nil && cell.PutFigures(figures) == nil {
		maps.Copy(faults, cell.Faults)
	}
	c := ChatCost{Rooms: rooms, Users: users, Messages: messages, Deliveries: r.Completed, Faults: faults,
		Seconds: el, ClientCPUSeconds: cpu, Latency: results.LatencyOf(r.Response)}
	if r.Completed > 0 {
		c.MicrosPerDelivery = cpu * 1e6 / float64(r.Completed)
		c.DeliveriesPerSecond = float64(r.Completed) / el
	}
	return c, nil
}

func selfRSSMB() float64 {
	p, err := process.NewProcess(int32(os.Getpid()))
	if err != nil {
		return 0
	}
	m, err := p.MemoryInfo()
	if err != nil {
		return 0
	}
	return float64(m.RSS) / (1 << 20)
}

func selfCPUSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
