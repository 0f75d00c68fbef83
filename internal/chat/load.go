package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
)

// Delivery faults a receiver counts, as error kinds of the chat tag.
const (
	FaultMissing    = "missing"
	FaultDuplicated = "duplicated"
	FaultReordered  = "out-of-order"
	FaultConnect    = "connect"
	FaultClosed     = "closed"
)

// Load is study 000's procedure: Users members in each of Rooms rooms join, wait JoinWait,
// then each sends Messages messages every Period; a member is done when it has every
// message of its room (its own included). Every delivery's latency, from the send time the
// message carries, goes into the recorder once; every member checks that each message of
// its room came exactly once and in order per sender.
type Load struct {
	Tag      string
	Rooms    int
	Users    int // per room
	Messages int // per user
	Period   time.Duration
	JoinWait time.Duration
	Linger   time.Duration // how long after the last send a member waits for the rest
}

// Deliveries is how many deliveries the load should see.
func (l Load) Deliveries() int64 {
	return int64(l.Rooms) * int64(l.Users) * int64(l.Users) * int64(l.Messages)
}

// Run drives the load against addr (host:port). It returns an error only when it could not
// start (nobody could connect); faults during the run are counted in rec.
func (l Load) Run(ctx context.Context, addr string, rec *load.Recorder) error {
	rec.Schedule(l.Tag, l.Deliveries())
	members := make([]*loadMember, 0, l.Rooms*l.Users)
	var mu sync.Mutex
	var wg sync.WaitGroup
	dials := make(chan struct{}, 64) // connects at a pace the server's accept queue takes
	for r := 0; r < l.Rooms; r++ {
		for u := 0; u < l.Users; u++ {
			wg.Add(1)
			go func(r, u int) {
				defer wg.Done()
				dials <- struct{}{}
				defer func() { <-dials }()
				m, err := l.connect(ctx, addr, r, u)
				if err != nil {
					rec.Update(l.Tag, func(st *load.TagStats) { st.Errors[FaultConnect]++ })
					return
				}
				mu.Lock()
				members = append(members, m)
				mu.Unlock()
			}(r, u)
		}
	}
	wg.Wait()
	if len(members) == 0 {
		return fmt.Errorf("no chat member could connect to %s", addr)
	}
	start := time.Now().Add(l.JoinWait)
	lastSend := start.Add(time.Duration(l.Messages) * l.Period)
	deadline := lastSend.Add(l.Linger)
	var late atomic.Int64
	for _, m := range members {
		wg.Add(2)
		go func(m *loadMember) { defer wg.Done(); m.receive(rec, l, deadline) }(m)
		go func(m *loadMember) { defer wg.Done(); m.send(ctx, l, start, &late) }(m)
	}
	stop := context.AfterFunc(ctx, func() { // Ctrl-C: end every member now
		for _, m := range members {
			m.c.ws.Close()
		}
	})
	defer stop()
	wg.Wait()
	for _, m := range members {
		m.c.ws.Close()
		missing, dup, reord := m.faults(l)
		rec.Update(l.Tag, func(st *load.TagStats) {
			add := func(kind string, n int64) {
				if n > 0 {
					st.Errors[kind] += n
				}
			}
			add(FaultMissing, missing)
			add(FaultDuplicated, dup)
			add(FaultReordered, reord)
			if m.closedEarly {
				st.Errors[FaultClosed]++
			}
		})
	}
	rec.Update(l.Tag, func(st *load.TagStats) { st.Late += late.Load() })
	return nil
}

// loadMember is one chat user of the load.
type loadMember struct {
	c           *Conn
	room, user  int
	name        string
	seen        [][]bool // per sender of the room, which seqs arrived
	next        []int    // per sender, the seq due next
	got         int
	dup, reord  int64
	closedEarly bool
}

func memberName(room, user int) string { return "r" + strconv.Itoa(room) + "u" + strconv.Itoa(user) }

func (l Load) connect(ctx context.Context, addr string, room, user int) (*loadMember, error) {
	c, err := Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	m := &loadMember{c: c, room: room, user: user, name: memberName(room, user),
		seen: make([][]bool, l.Users), next: make([]int, l.Users)}
	for i := range m.seen {
		m.seen[i] = make([]bool, l.Messages)
	}
	if err := c.Join(m.name, "room"+strconv.Itoa(room)); err != nil {
		c.ws.Close()
		return nil, err
	}
	return m, nil
}

// send sends the member's messages on the schedule; each carries its seq and send time.
func (m *loadMember) send(ctx context.Context, l Load, start time.Time, late *atomic.Int64) {
	room := "room" + strconv.Itoa(m.room)
	for seq := 0; seq < l.Messages; seq++ {
		due := start.Add(time.Duration(seq) * l.Period)
		if wait := time.Until(due); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return
			}
		} else if -wait > 10*time.Millisecond {
			late.Add(1)
		}
		msg := strconv.Itoa(seq) + " " + strconv.FormatInt(time.Now().UnixNano(), 10)
		if m.c.Send(m.name, room, msg) != nil {
			return
		}
	}
}

// receive reads until every message of the room has come or the deadline passes.
func (m *loadMember) receive(rec *load.Recorder, l Load, deadline time.Time) {
	want := l.Users * l.Messages
	_ = m.c.ws.SetReadDeadline(deadline)
	for m.got < want {
		raw, err := m.c.ReadRaw()
		now := time.Now()
		if err != nil {
			m.closedEarly = time.Now().Before(deadline) // the server dropped us, or Ctrl-C
			return
		}
		sender, seq, sent, ok := parseDelivery(raw, m.room, l.Messages, l.Users)
		if !ok {
			continue // a system notice or someone else's frame: not a delivery
		}
		rec.RecordDelivery(l.Tag, sent, now)
		switch {
		case m.seen[sender][seq]:
			m.dup++
			continue
		case seq < m.next[sender]:
			m.reord++
		}
		m.seen[sender][seq] = true
		m.next[sender] = max(m.next[sender], seq+1)
		m.got++
	}
}

// faults counts what never came, and what came twice or out of order.
func (m *loadMember) faults(l Load) (missing, dup, reord int64) {
	for _, s := range m.seen {
		for _, ok := range s {
			if !ok {
				missing++
			}
		}
	}
	return missing, m.dup, m.reord
}

// parseDelivery reads a delivered frame: the sender's index in the room, the seq and the
// send time, from {"name":"r<room>u<user>",…,"message":"<seq> <unix ns>"}.
func parseDelivery(raw []byte, room, messages, users int) (sender, seq int, sent time.Time, ok bool) {
	var f struct {
		Name    string `json:"name"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &f) != nil {
		return 0, 0, time.Time{}, false
	}
	prefix := "r" + strconv.Itoa(room) + "u"
	if !strings.HasPrefix(f.Name, prefix) {
		return 0, 0, time.Time{}, false
	}
	sender, err1 := strconv.Atoi(f.Name[len(prefix):])
	seqText, nsText, found := strings.Cut(f.Message, " ")
	seq, err2 := strconv.Atoi(seqText)
	ns, err3 := strconv.ParseInt(nsText, 10, 64)
	if !found || err1 != nil || err2 != nil || err3 != nil || sender < 0 || sender >= users || seq < 0 || seq >= messages {
		return 0, 0, time.Time{}, false
	}
	return sender, seq, time.Unix(0, ns), true
}

// Feature is the contract feature a contender needs for this load.
func (l Load) Feature() string { return "chat" }

// Describe says what the load does, for the results.
func (l Load) Describe() string {
	return fmt.Sprintf("chat: %d room(s) × %d users, each joins, waits %s, then sends %d messages every %s", l.Rooms, l.Users, l.JoinWait, l.Messages, l.Period)
}

// Expected is the load's planned length, for the ETA.
func (l Load) Expected() time.Duration {
	return l.JoinWait + time.Duration(l.Messages)*l.Period + 2*time.Second
}

// Stream describes the load's one tagged stream: deliveries over /chat.
func (l Load) Stream() results.StreamPlan {
	return results.StreamPlan{Tag: l.Tag, Path: "/chat", Mode: "websocket", Connections: l.Rooms * l.Users}
}
