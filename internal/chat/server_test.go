package chat

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// patience bounds every wait of these tests for something the server does.
const patience = 5 * time.Second

func startServer(t *testing.T) *Server {
	t.Helper()
	s, err := StartServer("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// open opens /chat on s with dial; the connection is closed when the test ends.
func open(t *testing.T, s *Server, dial func(context.Context, string) (*Conn, error)) *Conn {
	t.Helper()
	c, err := dial(context.Background(), s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// joined opens /chat on s and joins room as name.
func joined(t *testing.T, s *Server, name, room string) *Conn {
	t.Helper()
	c := open(t, s, Dial)
	if err := c.Join(name, room); err != nil {
		t.Fatalf("%s joining %s: %v", name, room, err)
	}
	return c
}

// waitFor polls cond until it holds, and fails the test if it does not within patience.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", patience, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// roomHas reports whether room on s has exactly n members.
func roomHas(s *Server, room string, n int) func() bool {
	return func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.rooms[room]) == n
	}
}

// read reads c's next frame and checks it is name's message in room.
func read(t *testing.T, c *Conn, who, name, room, message string) {
	t.Helper()
	f, err := c.Read(patience)
	if err != nil || f.Name != name || f.Chat != room || f.Message != message {
		t.Fatalf("%s got %+v, %v; want %s's %q in %s", who, f, err, name, message, room)
	}
}

func TestReferenceServerBroadcastsToTheRoom(t *testing.T) {
	s := startServer(t)
	a := joined(t, s, "a", "r")
	b := joined(t, s, "b", "r")
	c := joined(t, s, "c", "other")
	waitFor(t, "a and b in r, c in other", func() bool { return roomHas(s, "r", 2)() && roomHas(s, "other", 1)() })

	if err := a.Send("a", "r", "hi"); err != nil {
		t.Fatal(err)
	}
	read(t, a, "a", "a", "r", "hi")
	read(t, b, "b", "a", "r", "hi")
	// a's message was queued for every member of r before c's own can be, so c's first
	// frame being its own shows that a's did not reach it.
	if err := c.Send("c", "other", "mine"); err != nil {
		t.Fatal(err)
	}
	read(t, c, "c", "c", "other", "mine")
}

// A member that leaves is out of its room, and its name is free again.
func TestReferenceServerFreesAClosedMembersName(t *testing.T) {
	s := startServer(t)
	a := joined(t, s, "a", "r")
	joined(t, s, "b", "r")
	waitFor(t, "a and b in r", roomHas(s, "r", 2))
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a out of r", roomHas(s, "r", 1))
	again := joined(t, s, "a", "r")
	if err := again.Send("a", "r", "back"); err != nil {
		t.Fatal(err)
	}
	read(t, again, "the new a", "a", "r", "back")
}

// A member closed for an oversize frame leaves its room before its queue is closed: a
// message to the room at that moment once panicked the sender's handler (send on a closed
// channel), which cut the sender off.
func TestAnOversizeFrameDoesNotBreakTheRoom(t *testing.T) {
	s := startServer(t)
	talker := joined(t, s, "talker", "r")
	big := fmt.Sprintf("%q", strings.Repeat("x", MaxFrame))
	for round := range 20 {
		name := fmt.Sprintf("big-%d", round)
		c := open(t, s, DialWholeFrames)
		if err := c.Join(name, "r"); err != nil {
			t.Fatal(err)
		}
		waitFor(t, name+" and the talker in r", roomHas(s, "r", 2))
		sent := make(chan error, 1)
		go func() { sent <- c.WriteText([]byte(`{"name":"` + name + `","chat":"r","message":` + big + `}`)) }()
		// The talker keeps talking while the server closes the other member.
		deadline := time.Now().Add(patience)
		for i := 0; !roomHas(s, "r", 1)(); i++ {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: %s still in r after %s", round, name, patience)
			}
			msg := fmt.Sprintf("%d-%d", round, i)
			if err := talker.Send("talker", "r", msg); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			read(t, talker, "the talker", "talker", "r", msg)
		}
		if err := <-sent; err != nil {
			t.Fatal(err)
		}
		var err error
		for err == nil { // what the room said before the close, then the close
			_, err = c.Read(patience)
		}
		if CloseCode(err) != 1009 {
			t.Fatalf("round %d: the oversize frame's sender got %v, want close 1009", round, err)
		}
		c.Close()
	}
}
