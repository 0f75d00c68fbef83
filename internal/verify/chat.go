package verify

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/chat"
)

// chatWait bounds every expected frame; a silence check waits quietFor.
const (
	chatWait = 5 * time.Second
	quietFor = 500 * time.Millisecond
)

// expect reads c until a frame matches, skipping others (other senders' traffic).
func expect(c *chat.Conn, match func(chat.Frame) bool) (chat.Frame, error) {
	deadline := time.Now().Add(chatWait)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return chat.Frame{}, chat.ErrTimeout
		}
		f, err := c.Read(left)
		if err != nil {
			return f, err
		}
		if match(f) {
			return f, nil
		}
	}
}

func from(name, message string) func(chat.Frame) bool {
	return func(f chat.Frame) bool { return !f.IsSystem() && f.Name == name && f.Message == message }
}

func system(f chat.Frame) bool { return f.IsSystem() }

// member is a joined chat user.
type member struct {
	name, room string
	c          *chat.Conn
}

// joinRoom opens /chat, joins, and proves the join by receiving its own first message.
func joinRoom(ctx context.Context, addr, name, room string) (*member, error) {
	return joinRoomWith(ctx, chat.Dial, addr, name, room)
}

func joinRoomWith(ctx context.Context, dial func(context.Context, string) (*chat.Conn, error), addr, name, room string) (*member, error) {
	c, err := dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	m := &member{name: name, room: room, c: c}
	if err := c.Join(name, room); err != nil {
		c.Close()
		return nil, err
	}
	if err := m.say("hello from " + name); err != nil {
		c.Close()
		return nil, err
	}
	if _, err := expect(c, from(name, "hello from "+name)); err != nil {
		c.Close()
		return nil, fmt.Errorf("%s joined %s but did not get its own message back: %v", name, room, err)
	}
	return m, nil
}

func (m *member) say(msg string) error { return m.c.Send(m.name, m.room, msg) }

// ChatChecks runs the /chat rules of the contract against s, then the WebSocket protocol's
// abuse, checking after each bad frame that s is still ready and the same processes.
func ChatChecks(ctx context.Context, s *Server) []Check {
	var out []Check
	addr := s.Addr
	add := func(name string, err error, started time.Time) bool {
		c := Check{Group: GroupChat, Name: "chat: " + name, OK: err == nil, Took: time.Since(started)}
		if err != nil {
			c.Detail = err.Error()
		}
		out = append(out, c)
		return err == nil
	}
	ready := func(after string) { out = append(out, s.after(ctx, GroupChat, "chat: "+after)) }

	start := time.Now()
	alice, err := joinRoom(ctx, addr, "alice", "r1")
	if !add("join, and the sender gets its own message", err, start) {
		return out
	}
	defer alice.c.Close()
	start = time.Now()
	bob, err := joinRoom(ctx, addr, "bob", "r1")
	if err == nil {
		defer bob.c.Close()
		_, err = expect(alice.c, from("bob", "hello from bob"))
	}
	if !add("a second member's message reaches the first", err, start) {
		return out
	}
	start = time.Now()
	carol, err := joinRoom(ctx, addr, "carol", "r2")
	if !add("join another room", err, start) {
		return out
	}
	defer carol.c.Close()

	// Order per sender, each exactly once, to every member, the sender included.
	start = time.Now()
	const n = 100
	err = inOrder(alice, bob, n)
	add(fmt.Sprintf("%d messages arrive in order, once each, to every member", n), err, start)

	start = time.Now()
	err = answeredBySystem(alice, bob, func() error { return alice.c.WriteText([]byte("this is not JSON")) }, "after not-json")
	add("a frame that is not JSON gets a system frame, the sender stays", err, start)
	ready("a frame that is not JSON")

	start = time.Now()
	err = answeredBySystem(alice, bob, func() error {
		return alice.c.WriteJSON(map[string]string{"name": "alice", "chat": "r1"})
	}, "after missing-field")
	add("a frame without its message gets a system frame, the sender stays", err, start)
	ready("a frame without its message")

	start = time.Now()
	err = messageBeforeJoin(ctx, addr, bob)
	add("a message before the join gets a system frame, and the join still works", err, start)
	ready("a message before the join")

	start = time.Now()
	err = takenName(ctx, addr)
	add("a taken name gets a system frame and close 1008", err, start)
	ready("a taken name")

	start = time.Now()
	err = oversizeFrame(ctx, addr, alice, bob)
	add("a frame over 64 KiB is closed with 1009, the others are unaffected", err, start)
	ready("an oversize frame")

	start = time.Now()
	err = nameFreedOnClose(ctx, addr, alice, bob)
	add("a name is free again once its connection closes", err, start)

	// Nothing of room r1 may have reached carol in r2.
	start = time.Now()
	add("messages stay in their room", nothingReaches(carol), start)
	ready("the chat checks")
	side, err := chatSide(ctx, addr)
	return append(out, protocolChecks(ctx, s, side, err)...)
}

// nothingReaches checks that no message reaches m (alone in its room) for quietFor.
func nothingReaches(m *member) error {
	f, err := m.c.Read(quietFor)
	switch {
	case errors.Is(err, chat.ErrTimeout):
		return nil
	case err == nil:
		return fmt.Errorf("a member of %s received %s's %q from %s", m.room, f.Name, clipText(f.Message), f.Chat)
	}
	return err
}

// inOrder has alice send n messages: each must reach bob and alice herself once, in order.
func inOrder(alice, bob *member, n int) error {
	var err error
	for i := 0; i < n && err == nil; i++ {
		err = alice.say(fmt.Sprintf("seq-%d", i))
	}
	if err == nil {
		err = receivedInOrder(bob.c, "alice", n)
	}
	if err == nil {
		err = receivedInOrder(alice.c, "alice", n)
	}
	return err
}

// answeredBySystem has alice send a bad frame (send): she must get a system frame back and
// still talk with bob.
func answeredBySystem(alice, bob *member, send func() error, after string) error {
	err := send()
	if err == nil {
		_, err = expect(alice.c, system)
	}
	if err == nil {
		err = stillTalking(alice, bob, after)
	}
	return err
}

// messageBeforeJoin sends a message on a connection that has not joined: it must get a
// system frame, and the join after it must still work.
func messageBeforeJoin(ctx context.Context, addr string, bob *member) error {
	c, err := chat.Dial(ctx, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Send("dave", "r1", "before joining"); err != nil {
		return err
	}
	if _, err := expect(c, system); err != nil {
		return fmt.Errorf("no system frame for a message before the join: %v", err)
	}
	dave := &member{name: "dave", room: "r1", c: c}
	if err := c.Join("dave", "r1"); err != nil {
		return err
	}
	return stillTalking(dave, bob, "dave joins late")
}

// takenName joins with a name another connection holds: a system frame, then close 1008.
func takenName(ctx context.Context, addr string) error {
	c, err := chat.Dial(ctx, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Join("alice", "r2"); err != nil {
		return err
	}
	if _, err := expect(c, system); err != nil {
		return fmt.Errorf("no system frame for a taken name: %v", err)
	}
	if _, err := expect(c, func(chat.Frame) bool { return false }); chat.CloseCode(err) != 1008 {
		return fmt.Errorf("want close 1008 after the system frame, got %v", err)
	}
	return nil
}

// oversizeFrame sends a 70 KiB message: its connection is closed with 1009, and alice and
// bob still talk.
func oversizeFrame(ctx context.Context, addr string, alice, bob *member) error {
	frank, err := joinRoomWith(ctx, chat.DialWholeFrames, addr, "frank", "r1") // one 70 KiB frame, not 4 KiB pieces
	if err != nil {
		return err
	}
	defer frank.c.Close()
	big := strings.Repeat("x", 70*1024)
	if err := frank.say(big); err != nil {
		return err
	}
	_, err = expect(frank.c, func(chat.Frame) bool { return false })
	if chat.CloseCode(err) != 1009 {
		return fmt.Errorf("want close 1009 for a 70 KiB frame, got %v", err)
	}
	return stillTalking(alice, bob, "after an oversize frame")
}

// nameFreedOnClose closes alice's connection and joins as alice again, talking to bob.
func nameFreedOnClose(ctx context.Context, addr string, alice, bob *member) error {
	alice.c.Close()
	again, err := rejoin(ctx, addr, "alice", "r1")
	if err != nil {
		return fmt.Errorf("the name was not freed on close: %v", err)
	}
	defer again.c.Close()
	return stillTalking(again, bob, "the new alice")
}

// rejoin joins as name once the server has freed it: the close that frees it reaches the
// server a moment after the client sent it, later on a loaded machine.
func rejoin(ctx context.Context, addr, name, room string) (*member, error) {
	deadline := time.Now().Add(chatWait)
	for {
		m, err := joinRoom(ctx, addr, name, room)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			return m, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// receivedInOrder reads c until it has n messages "seq-0".."seq-(n-1)" from sender,
// failing on a gap, a duplicate or a reordering.
func receivedInOrder(c *chat.Conn, sender string, n int) error {
	next := 0
	for next < n {
		f, err := expect(c, func(f chat.Frame) bool { return f.Name == sender && strings.HasPrefix(f.Message, "seq-") })
		if err != nil {
			return fmt.Errorf("after seq-%d of %d: %v", next-1, n, err)
		}
		if want := fmt.Sprintf("seq-%d", next); f.Message != want {
			return fmt.Errorf("got %s where %s was due (missing, duplicated or out of order)", f.Message, want)
		}
		next++
	}
	return nil
}

// stillTalking proves that a sends and b hears it.
func stillTalking(a, b *member, what string) error {
	msg := "still here: " + what
	if err := a.say(msg); err != nil {
		return fmt.Errorf("%s can no longer send: %v", a.name, err)
	}
	if _, err := expect(b.c, from(a.name, msg)); err != nil {
		return fmt.Errorf("%s did not hear %s (%s): %v", b.name, a.name, what, err)
	}
	return nil
}

func clipText(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
