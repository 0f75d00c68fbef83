package stream

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"runtime"
	"testing"
	"time"
)

// pongs is the socket under a Conn read from bytes: it keeps the payloads of the pongs the
// reader writes back, unmasked.
type pongs struct {
	net.Conn
	got [][]byte
}

func (p *pongs) Write(frame []byte) (int, error) {
	if len(frame) < 6 || frame[0] != 0x80|10 {
		return 0, errors.New("not a pong")
	}
	payload := append([]byte{}, frame[6:]...)
	for i := range payload {
		payload[i] ^= frame[2+i%4]
	}
	p.got = append(p.got, payload)
	return len(frame), nil
}

func (p *pongs) SetWriteDeadline(time.Time) error { return nil }

// discard is a socket that takes the pongs and keeps nothing: no allocation of its own.
type discard struct{ net.Conn }

func (discard) Write(b []byte) (int, error)      { return len(b), nil }
func (discard) SetWriteDeadline(time.Time) error { return nil }

// frame is one frame a server could send: fin, opcode, payload (unmasked).
func frame(fin bool, op byte, payload []byte) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	out := []byte{b0}
	switch n := len(payload); {
	case n < 126:
		out = append(out, byte(n))
	case n < 1<<16:
		out = binary.BigEndian.AppendUint16(append(out, 126), uint16(n))
	default:
		out = binary.BigEndian.AppendUint64(append(out, 127), uint64(n))
	}
	return append(out, payload...)
}

func concat(frames ...[]byte) []byte { return bytes.Join(frames, nil) }

// stream is what RFC 6455 lets a server send, read the simple way: the text messages
// whole, the pings' payloads, and whether the bytes end in a frame the client must refuse
// (or a close: its code).
type stream struct {
	messages [][]byte
	pings    [][]byte
	refused  bool
	closed   bool
	close    int // the close frame's code, when closed
}

// readStream walks b frame by frame with indices: the model ReadMessage is held to.
func readStream(b []byte) (s stream) {
	var msg []byte
	fragmented := false
	for len(b) >= 2 {
		fin, rsv, op, masked := b[0]&0x80 != 0, b[0]&0x70, b[0]&0x0f, b[1]&0x80 != 0
		n, head := uint64(b[1]&0x7f), 2
		if n == 126 && len(b) >= 4 {
			n, head = uint64(binary.BigEndian.Uint16(b[2:])), 4
		} else if n == 127 && len(b) >= 10 {
			n, head = binary.BigEndian.Uint64(b[2:]), 10
		} else if n >= 126 {
			return s // cut short
		}
		control := op >= 8
		bad := masked || rsv != 0 || n > 1<<24 || uint64(len(msg))+n > 1<<24 ||
			(control && (n > 125 || !fin || op > 10)) ||
			(!control && (op > 1 || (op == 0) != fragmented))
		if bad {
			s.refused = true
			return s
		}
		if uint64(len(b)-head) < n {
			return s // cut short
		}
		payload := b[head : head+int(n)]
		b = b[head+int(n):]
		switch {
		case op == 8:
			s.closed, s.close = true, 1005
			if n >= 2 {
				s.close = int(binary.BigEndian.Uint16(payload))
			}
			return s
		case op == 9:
			s.pings = append(s.pings, payload)
		case !control:
			msg = append(msg, payload...)
			fragmented = !fin
			if fin {
				s.messages = append(s.messages, msg)
				msg = nil
			}
		}
	}
	return s
}

// FuzzReadMessage feeds any bytes to the hand-read WebSocket client as a server's stream:
// it must return exactly the messages the frames hold (never a byte more than their headers
// announce), answer each ping with its payload, refuse every frame RFC 6455 forbids a server
// (masked, reserved bits, an unknown or misplaced opcode, a control frame over 125 bytes or
// fragmented), and never grow its buffer past twice the largest message.
func FuzzReadMessage(f *testing.F) {
	msg := AppendMessage(nil, 7, 1_700_000_000_000_000, 250)
	f.Add(frame(true, 1, msg))
	f.Add(concat(frame(false, 1, msg[:100]), frame(true, 9, []byte("ping")), frame(true, 0, msg[100:]),
		frame(true, 1, msg)))
	// A 64-bit length on a small frame: a large one would make every mutation slow to run.
	long := append([]byte{0x81, 127, 0, 0, 0, 0, 0, 0, 1, 44}, bytes.Repeat([]byte("x"), 300)...)
	f.Add(concat(long, frame(true, 8, []byte{0x03, 0xe9, 'b', 'y', 'e'})))
	f.Add(concat(frame(true, 1, msg), frame(true, 10, nil), frame(true, 8, nil)))
	f.Add([]byte{0x81, 0x85, 1, 2, 3, 4, 'h', 'e', 'l', 'l', 'o'}) // masked
	f.Add(frame(true, 2, msg))                                     // binary
	f.Fuzz(func(t *testing.T, b []byte) {
		want := readStream(b)
		sock := &pongs{}
		c := &Conn{nc: sock, br: bufio.NewReaderSize(bytes.NewReader(b), 4096), buf: make([]byte, 0, 1024)}
		var got [][]byte
		largest := 0
		var err error
		for {
			var m []byte
			if m, err = c.ReadMessage(); err != nil {
				break
			}
			got = append(got, append([]byte{}, m...))
			largest = max(largest, len(m))
			if cap(c.buf) > max(1024, 2*largest) {
				t.Fatalf("buffer of %d bytes after messages of at most %d", cap(c.buf), largest)
			}
		}
		if len(got) != len(want.messages) {
			t.Fatalf("%d messages read; the frames hold %d (then %v)", len(got), len(want.messages), err)
		}
		for i := range got {
			if !bytes.Equal(got[i], want.messages[i]) {
				t.Fatalf("message %d: %d bytes %q; the frames hold %d bytes %q",
					i, len(got[i]), clip(got[i]), len(want.messages[i]), clip(want.messages[i]))
			}
		}
		var ce *CloseError
		switch {
		case want.closed && (!errors.As(err, &ce) || ce.Code != want.close):
			t.Fatalf("ended with %v; want the server's close %d", err, want.close)
		case !want.closed && errors.As(err, &ce):
			t.Fatalf("ended with %v where no close frame was due", err)
		}
		if len(sock.got) != len(want.pings) {
			t.Fatalf("%d pongs for %d pings", len(sock.got), len(want.pings))
		}
		for i := range sock.got {
			if !bytes.Equal(sock.got[i], want.pings[i]) {
				t.Fatalf("pong %d carries %q for the ping's %q", i, sock.got[i], want.pings[i])
			}
		}
		_ = want.refused // refused or cut short, the reading ends in an error: checked by the counts above
	})
}

// An announced 16 MiB ping, or a fragmented one, is refused before anything is allocated
// for it; messages cost no allocation, and a ping only its pong's frame.
func TestReadMessageAllocatesNothingPerMessage(t *testing.T) {
	msg := AppendMessage(nil, 1, 1_700_000_000_000_000, 250)
	for _, c := range []struct {
		name  string
		one   []byte
		bound float64
	}{
		{"fragmented messages", concat(frame(false, 1, msg[:50]), frame(true, 0, msg[50:])), 0},
		{"a ping before each", concat(frame(true, 9, []byte("p")), frame(true, 1, msg)), 1},
	} {
		const n = 200
		all := bytes.Repeat(c.one, n)
		r := bytes.NewReader(all)
		conn := &Conn{nc: discard{}, br: bufio.NewReaderSize(r, 4096), buf: make([]byte, 0, 1024)}
		allocs := testing.AllocsPerRun(10, func() {
			r.Reset(all)
			conn.br.Reset(r)
			for range n {
				if _, err := conn.ReadMessage(); err != nil {
					t.Fatal(err)
				}
			}
		})
		if perMessage := allocs / n; perMessage > c.bound {
			t.Errorf("%s: %.2f allocations per message; want at most %.0f", c.name, perMessage, c.bound)
		}
	}
	for _, bad := range [][]byte{
		{0x89, 127, 0, 0, 0, 0, 1, 0, 0, 0}, // a ping announcing 16 MiB
		frame(false, 9, []byte("p")),        // a fragmented ping
	} {
		c := &Conn{nc: discard{}, br: bufio.NewReader(bytes.NewReader(bad))}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := c.ReadMessage()
		runtime.ReadMemStats(&after)
		if err == nil || errors.As(err, new(*CloseError)) {
			t.Errorf("% x: err %v; want a refusal", bad, err)
		}
		if spent := after.TotalAlloc - before.TotalAlloc; spent > 64<<10 {
			t.Errorf("% x: %d bytes allocated to refuse it", bad, spent)
		}
	}
}
