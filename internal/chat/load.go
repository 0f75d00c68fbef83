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

// Transport failures a member counts, as error kinds of the chat tag; what it finds wrong
// in the deliveries themselves goes into the figures (results.FaultLost and the rest).
const (
	FaultConnect = "connect" // a member that could not join
	FaultClosed  = "closed"  // a member the server dropped before it had every message
)

// DefaultGrace is how long a member keeps reading after its last expected message: a
// server that sends a message twice, or another room's, is caught even when it does so last.
const DefaultGrace = time.Second

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
	Grace    time.Duration // how long it reads on once it has them all (0: DefaultGrace)
	// Part and Parts: this load is share Part of Parts, and runs the rooms r ≡ Part (mod
	// Parts) only, whole: a room's latency is measured on one clock. Parts 0 is the whole.
	Part, Parts int
}

var _ load.Divisible = Load{}

// mine says whether room r is this share's.
func (l Load) mine(r int) bool { return l.Parts <= 1 || r%l.Parts == l.Part }

// rooms is how many rooms this share runs.
func (l Load) rooms() (n int) {
	for r := 0; r < l.Rooms; r++ {
		if l.mine(r) {
			n++
		}
	}
	return n
}

// Share deals whole rooms out, room r to share r mod n: a room is never split, so a share
// beyond the rooms has none and its agent stands idle.
func (l Load) Share(i, n int) (load.Load, error) {
	out := l
	out.Part, out.Parts = i, n
	return out, nil
}

// Join adds the shares' members and faults; cut short when any share was.
func (Load) Join(raw []json.RawMessage) (results.Figures, error) {
	out := &Figures{}
	for k, r := range raw {
		var f Figures
		if err := json.Unmarshal(r, &f); err != nil {
			return nil, fmt.Errorf("share %d's chat figures: %w", k, err)
		}
		out.Members += f.Members
		out.Lost += f.Lost
		out.Duplicated += f.Duplicated
		out.Reordered += f.Reordered
		out.Leaked += f.Leaked
		out.Sends += f.Sends
		out.CutShort = out.CutShort || f.CutShort
	}
	return out, nil
}

func (l Load) grace() time.Duration {
	if l.Grace > 0 {
		return l.Grace
	}
	return DefaultGrace
}

// Deliveries is how many deliveries the load should see.
func (l Load) Deliveries() int64 {
	return int64(l.rooms()) * int64(l.Users) * int64(l.Users) * int64(l.Messages)
}

// Run drives the load against the target and returns what the members found wrong in the
// deliveries. It returns an error only when it could not start (nobody could connect);
// transport failures during the run are counted in rec.
func (l Load) Run(ctx context.Context, target load.Target, rec *load.Recorder) (results.Figures, error) {
	addr := target.Addr
	if l.rooms() == 0 {
		return &Figures{}, nil // a share beyond the rooms
	}
	rec.Schedule(l.Tag, l.Deliveries())
	members := make([]*loadMember, 0, l.rooms()*l.Users)
	var mu sync.Mutex
	var wg sync.WaitGroup
	dials := make(chan struct{}, 64) // connects at a pace the server's accept queue takes
	for r := 0; r < l.Rooms; r++ {
		if !l.mine(r) {
			continue
		}
		for u := 0; u < l.Users; u++ {
			wg.Add(1)
			go func(r, u int) {
				defer wg.Done()
				dials <- struct{}{}
				defer func() { <-dials }()
				m, err := l.connect(ctx, addr, r, u)
				if err != nil {
					rec.Update(l.Tag, func(st *results.TagStats) { st.Errors[FaultConnect]++ })
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
		return nil, fmt.Errorf("no chat member could connect to %s", addr)
	}
	start := time.Now().Add(l.JoinWait)
	lastSend := start.Add(time.Duration(l.Messages) * l.Period)
	deadline := lastSend.Add(l.Linger)
	var sends, late atomic.Int64
	for _, m := range members {
		wg.Add(2)
		go func(m *loadMember) { defer wg.Done(); m.receive(rec, l, deadline) }(m)
		go func(m *loadMember) { defer wg.Done(); m.send(ctx, l, start, &sends, &late) }(m)
	}
	stop := context.AfterFunc(ctx, func() { // Ctrl-C: end every member now
		for _, m := range members {
			m.c.ws.Close()
		}
	})
	defer stop()
	wg.Wait()
	// Ended early (the server died, or Ctrl-C): what never came is the outcome's doing, not
	// a message the server lost.
	f := &Figures{Members: len(members), Sends: sends.Load(), CutShort: ctx.Err() != nil}
	for _, m := range members {
		m.c.ws.Close()
		if !f.CutShort {
			f.Lost += m.missing()
		}
		f.Duplicated += m.dup
		f.Reordered += m.reord
		f.Leaked += m.leaked
		if m.closedEarly {
			rec.Update(l.Tag, func(st *results.TagStats) { st.Errors[FaultClosed]++ })
		}
	}
	rec.Update(l.Tag, func(st *results.TagStats) { st.Late += late.Load() })
	return f, nil
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
	leaked      int64
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
	if err := c.Join(m.name, roomName(room)); err != nil {
		c.ws.Close()
		return nil, err
	}
	return m, nil
}

// send sends the member's messages on the schedule; each carries its seq and send time.
// sends counts them, late those sent more than 10 ms after they were due.
func (m *loadMember) send(ctx context.Context, l Load, start time.Time, sends, late *atomic.Int64) {
	room := roomName(m.room)
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
		sends.Add(1)
		if m.c.Send(m.name, room, msg) != nil {
			return
		}
	}
}

// receive reads until every message of the room has come and the grace after it has passed,
// or the deadline. Only a message's first delivery is recorded: a copy is a fault, not a
// second delivery or a second latency.
func (m *loadMember) receive(rec *load.Recorder, l Load, deadline time.Time) {
	want := l.Users * l.Messages
	_ = m.c.ws.SetReadDeadline(deadline)
	for {
		raw, err := m.c.ReadRaw()
		now := time.Now()
		if err != nil {
			// the grace or the deadline ends a member; before them the server dropped it, or Ctrl-C
			m.closedEarly = m.got < want && now.Before(deadline)
			return
		}
		d, kind := parseDelivery(raw, m.room, l.Messages, l.Users)
		switch {
		case kind == leakedFrame:
			m.leaked++
			continue
		case kind != roomDelivery:
			continue // a system notice, or a frame that is no message of the load
		case m.seen[d.sender][d.seq]:
			m.dup++
			continue
		case d.seq < m.next[d.sender]:
			m.reord++
		}
		m.seen[d.sender][d.seq] = true
		m.next[d.sender] = max(m.next[d.sender], d.seq+1)
		m.got++
		rec.RecordDelivery(l.Tag, d.sent, now)
		if m.got == want {
			_ = m.c.ws.SetReadDeadline(minTime(deadline, now.Add(l.grace())))
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// missing counts the room's messages that never came.
func (m *loadMember) missing() (n int64) {
	for _, s := range m.seen {
		for _, ok := range s {
			if !ok {
				n++
			}
		}
	}
	return n
}

// delivery is one message of the load as a member received it.
type delivery struct {
	sender, seq int
	sent        time.Time
}

// What a frame is to a member.
type frameKind int

const (
	otherFrame   frameKind = iota // a system notice, or no message of the load
	roomDelivery                  // a message of the member's room
	leakedFrame                   // a message of another room
)

// parseDelivery reads a frame a member of room received: a message of its room, from
// {"name":"r<room>u<user>","chat":"room<room>","message":"<seq> <unix ns>"}, with the
// sender's index in the room, the seq and the send time; or another room's message, which
// the server should never have sent it.
func parseDelivery(raw []byte, room, messages, users int) (delivery, frameKind) {
	var f Frame
	if json.Unmarshal(raw, &f) != nil || f.IsSystem() || f.Name == "" {
		return delivery{}, otherFrame
	}
	prefix := "r" + strconv.Itoa(room) + "u"
	if f.Chat != roomName(room) || !strings.HasPrefix(f.Name, prefix) {
		return delivery{}, leakedFrame
	}
	sender, err1 := strconv.Atoi(f.Name[len(prefix):])
	seqText, nsText, found := strings.Cut(f.Message, " ")
	seq, err2 := strconv.Atoi(seqText)
	ns, err3 := strconv.ParseInt(nsText, 10, 64)
	if !found || err1 != nil || err2 != nil || err3 != nil || sender < 0 || sender >= users || seq < 0 || seq >= messages {
		return delivery{}, otherFrame
	}
	return delivery{sender: sender, seq: seq, sent: time.Unix(0, ns)}, roomDelivery
}

func roomName(room int) string { return "room" + strconv.Itoa(room) }

var _ load.Load = Load{}

// Describe says what the load does: rooms, users and messages; it needs /chat. Its length
// is the join wait and the sending; Timeout is how long a member waits for the rest after
// the last send.
func (l Load) Describe() load.Description {
	sending := l.JoinWait + time.Duration(l.Messages)*l.Period
	return load.Description{
		Text:     fmt.Sprintf("chat: %d room(s) × %d users, each joins, waits %s, then sends %d messages every %s", l.Rooms, l.Users, l.JoinWait, l.Messages, l.Period),
		Streams:  []results.StreamPlan{{Tag: l.Tag, Path: "/chat", Mode: "websocket", Connections: l.Rooms * l.Users}},
		Feature:  "chat",
		Duration: sending,
		Timeout:  l.Linger,
		Expected: sending + l.grace() + 2*time.Second,
	}
}

// Kind is the key a cell keeps a chat load's figures under.
const Kind = "chat"

// Figures are what the members found wrong in the deliveries: study 000's check that every
// member got each message of its room once and in order, and nothing else.
type Figures struct {
	Members    int   `json:"members"` // members that joined
	Lost       int64 `json:"lost"`    // messages of its room a member never got
	Duplicated int64 `json:"duplicated"`
	Reordered  int64 `json:"out_of_order"` // came after a later message of the same sender
	Leaked     int64 `json:"leaked"`       // another room's messages a member got
	// Sends are the messages the members sent on their schedules: TagStats.Late counts the
	// late ones among them (the tag's Sent counts deliveries, Users of them a send).
	Sends int64 `json:"sends,omitempty"`
	// CutShort: the load ended early (the server died, or Ctrl-C), so what never came is not
	// counted as lost.
	CutShort bool `json:"cut_short"`
}

var (
	_ results.Figures = (*Figures)(nil)
	_ results.Checked = (*Figures)(nil)
)

func (f *Figures) Kind() string { return Kind }

// Numbers: none worth a median; the faults are summed instead.
func (f *Figures) Numbers() map[string]float64 { return nil }

// Faults are lost, duplicated, reordered and leaked messages, each counted apart.
func (f *Figures) Faults() map[string]int64 {
	return map[string]int64{results.FaultLost: f.Lost, results.FaultDuplicated: f.Duplicated,
		results.FaultReordered: f.Reordered, results.FaultLeaked: f.Leaked}
}

// FiguresOf reads a cell's chat figures; false when the cell has none.
func FiguresOf(c results.Cell) (*Figures, bool) {
	var f Figures
	if !c.FiguresOf(Kind, &f) {
		return nil, false
	}
	return &f, true
}
