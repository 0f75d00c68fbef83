package verify

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/arena-lab/arena/internal/chat"
	"github.com/arena-lab/arena/internal/stream"
)

// The WebSocket protocol's abuse (RFC 6455, as the Autobahn suite sends it) on /chat and
// /stream: frames no client may send, control frames, fragments, close codes. Each is sent on
// a raw connection of its own; the answer the RFC asks for is checked, then that the others
// (the room's members, another stream) are unaffected, and that the server is still ready and
// the same processes.

// Opcodes and close codes of RFC 6455.
const (
	opCont, opText, opBinary, opClose, opPing, opPong = 0x0, 0x1, 0x2, 0x8, 0x9, 0xa

	closeNormal, closeProtocol, closeUnsupported, closeNoStatus, closeBadData, closeTooBig = 1000, 1002, 1003, 1005, 1007, 1009
)

// rawWS is a WebSocket connection written and read frame by frame.
type rawWS struct {
	nc net.Conn
	br *bufio.Reader
}

// wsFrame is a frame the server sent.
type wsFrame struct {
	op      byte
	payload []byte
}

// errGarbled is a frame no server may send (masked, or of more than 16 MiB): the frames are
// out of line. Seen after a bad frame, when a stack writes its close between the header and
// the payload of a message in flight (Tomcat, Jetty on /stream).
var errGarbled = errors.New("the server's frames went out of line (a masked or oversized frame)")

// errSilent is a server that sent nothing in time: neither the frame awaited nor a close.
var errSilent = errors.New("nothing from the server in time")

// closedError is how the server ended the connection: its close frame's code (1005 when
// it carried none), or 0 when the connection ended without a close frame.
type closedError struct{ code int }

func (e *closedError) Error() string {
	if e.code == 0 {
		return "the connection closed, no close frame"
	}
	return fmt.Sprintf("closed with %d", e.code)
}

func dialRaw(ctx context.Context, addr, path string) (*rawWS, error) {
	c, err := dial(ctx, addr, path)
	if err != nil {
		return nil, err
	}
	nc, br := c.Raw()
	return &rawWS{nc: nc, br: br}, nil
}

// frame builds a client frame; a length of -1 announces len(payload), another value is
// announced as given (a lie, for the oversize header).
func frame(fin bool, rsv, op byte, masked bool, payload []byte, announce int64) []byte {
	b0 := rsv<<4 | op
	if fin {
		b0 |= 0x80
	}
	n := uint64(len(payload))
	if announce >= 0 {
		n = uint64(announce)
	}
	var mask byte
	if masked {
		mask = 0x80
	}
	out := []byte{b0}
	switch {
	case n < 126:
		out = append(out, mask|byte(n))
	case n < 1<<16:
		out = append(out, mask|126, byte(n>>8), byte(n))
	default:
		out = append(out, mask|127)
		out = binary.BigEndian.AppendUint64(out, n)
	}
	if !masked {
		return append(out, payload...)
	}
	var key [4]byte
	_, _ = rand.Read(key[:])
	out = append(out, key[:]...)
	for i, b := range payload {
		out = append(out, b^key[i%4])
	}
	return out
}

// bigHeader announces 2^63 bytes: a length whose top bit RFC 6455 5.2 says must be 0.
func bigHeader() []byte {
	out := []byte{0x80 | opText, 0x80 | 127}
	out = binary.BigEndian.AppendUint64(out, 1<<63)
	return append(out, 1, 2, 3, 4, 'x', 'x', 'x', 'x')
}

func (w *rawWS) send(b []byte) error {
	_ = w.nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err := w.nc.Write(b)
	return err
}

func (w *rawWS) text(b []byte) error { return w.send(frame(true, 0, opText, true, b, -1)) }

func (w *rawWS) close() { _ = w.nc.Close() }

// next reads the server's next frame; a close frame or the connection's end is a *closedError.
func (w *rawWS) next(deadline time.Time) (wsFrame, error) {
	_ = w.nc.SetReadDeadline(deadline)
	h, err := stream.ReadFrameHeader(w.br)
	if err != nil {
		return wsFrame{}, w.ended(err)
	}
	if h.Masked || h.Len > 1<<24 {
		return wsFrame{}, errGarbled
	}
	op, n := h.Op, int(h.Len)
	f := wsFrame{op: op, payload: make([]byte, n)}
	if _, err := io.ReadFull(w.br, f.payload); err != nil {
		return f, w.ended(err)
	}
	if op == opText && !utf8.Valid(f.payload) {
		return f, fmt.Errorf("the server sent a text frame that is not UTF-8: %q", clip(f.payload))
	}
	if op == opClose {
		code := closeNoStatus
		if n >= 2 {
			code = int(binary.BigEndian.Uint16(f.payload))
		}
		return f, &closedError{code: code}
	}
	return f, nil
}

// ended turns a read error into a *closedError unless it is a timeout.
func (w *rawWS) ended(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return errSilent
	}
	return &closedError{}
}

// until reads frames until match takes one; it fails on a close or when chatWait passes.
func (w *rawWS) until(match func(wsFrame) bool) error {
	deadline := time.Now().Add(chatWait)
	for {
		f, err := w.next(deadline)
		if err != nil {
			return err
		}
		if match(f) {
			return nil
		}
	}
}

// closed reads until the server ends the connection and returns how.
func (w *rawWS) closed() (*closedError, error) {
	err := w.until(func(wsFrame) bool { return false })
	var ce *closedError
	if errors.As(err, &ce) {
		return ce, nil
	}
	return nil, err
}

// A wsSide is /chat or /stream as the protocol checks see it: how to open a connection on
// it, how to prove that connection still works, and how to prove the others are unaffected.
type wsSide struct {
	group  string
	open   func(ctx context.Context, name string) (*rawWS, error)
	alive  func(w *rawWS, name string) error
	others func(what string) error
	done   func()
}

// A wsAbuse is one frame sent, and what the check accepts back.
type wsAbuse struct {
	name   string
	frame  func(side wsSide, name string) []byte
	accept func(side wsSide, w *rawWS, name string) error
}

// closesWith accepts a close frame with one of codes, or the connection closed without one
// (RFC 6455 7.1.7: failing the connection may be just closing it).
func closesWith(codes ...int) func(wsSide, *rawWS, string) error {
	return func(_ wsSide, w *rawWS, _ string) error {
		ce, err := w.closed()
		if errors.Is(err, errGarbled) {
			return garbledClose(codes)
		}
		if err != nil {
			return fmt.Errorf("%v, want a close %v", err, codes)
		}
		if ce.code != 0 && !slices.Contains(codes, ce.code) {
			return fmt.Errorf("%v, want a close %v or the connection closed", ce, codes)
		}
		return nil
	}
}

// stays accepts the frame ignored (or answered) with the connection still working.
func stays(side wsSide, w *rawWS, name string) error { return side.alive(w, name) }

// staysOrCloses accepts a close with one of codes (or the connection closed); short of that,
// it tolerates the frame ignored with the connection still working, a lenient reader's way
// (why says which).
func staysOrCloses(why string, codes ...int) func(wsSide, *rawWS, string) error {
	return func(side wsSide, w *rawWS, name string) error {
		err := side.alive(w, name)
		var ce *closedError
		switch {
		case errors.As(err, &ce) && (ce.code == 0 || slices.Contains(codes, ce.code)):
			return nil
		case errors.Is(err, errGarbled):
			return garbledClose(codes)
		case err == nil && why != "":
			return tolerated(fmt.Sprintf("ignored, the connection going on, where RFC 6455 asks for a close %v (%s)", codes, why))
		case err == nil:
			return nil
		}
		return err
	}
}

// staysClosesOrFallsSilent accepts what staysOrCloses accepts; it also tolerates the
// connection falling silent, neither closed nor answering (a stack that misreads the frame and
// waits for bytes that never come): the connection is the bad client's own, the others go on.
func staysClosesOrFallsSilent(why string, codes ...int) func(wsSide, *rawWS, string) error {
	stays := staysOrCloses(why, codes...)
	return func(side wsSide, w *rawWS, name string) error {
		err := stays(side, w, name)
		if errors.Is(err, errSilent) {
			return tolerated(fmt.Sprintf("the connection fell silent, where RFC 6455 asks for a close %v (%s)", codes, why))
		}
		return err
	}
}

// closesAny accepts a close with one of codes, or the connection closed; it tolerates a close
// with another code (why says which): the connection ends as the client asked.
func closesAny(why string, codes ...int) func(wsSide, *rawWS, string) error {
	return func(_ wsSide, w *rawWS, _ string) error {
		ce, err := w.closed()
		switch {
		case errors.Is(err, errGarbled):
			return garbledClose(codes)
		case err != nil:
			return fmt.Errorf("%v, want a close %v", err, codes)
		case ce.code == 0 || slices.Contains(codes, ce.code):
			return nil
		}
		return tolerated(fmt.Sprintf("%v where RFC 6455 asks for %v (%s)", ce, codes, why))
	}
}

// garbledClose tolerates a close that came out of line: the connection fails, as asked, but
// its close frame was written into a message in flight, a fault of the stack's that the
// client it closes cannot be hurt by.
func garbledClose(codes []int) error {
	return tolerated(fmt.Sprintf("the frames went out of line, then the connection closed, where RFC 6455 asks for a close %v (a close written between a message's header and its payload)", codes))
}

// pongs accepts a pong with the ping's payload, the connection still working after.
func pongs(side wsSide, w *rawWS, name string) error {
	if err := w.until(func(f wsFrame) bool { return f.op == opPong && string(f.payload) == "arena-ping" }); err != nil {
		return fmt.Errorf("no pong with the ping's payload: %v", err)
	}
	return side.alive(w, name)
}

// echoesClose accepts the close answered by a close (with no code, or 1000).
func echoesClose(_ wsSide, w *rawWS, _ string) error {
	ce, err := w.closed()
	switch {
	case err != nil:
		return fmt.Errorf("%v, want a close frame back", err)
	case ce.code == 0:
		return errors.New("the connection closed with no close frame back (RFC 6455 5.5.1 asks for one)")
	case ce.code != closeNoStatus && ce.code != closeNormal:
		return fmt.Errorf("%v, want a close with no status or 1000", ce)
	}
	return nil
}

func ctl(op byte, payload []byte) func(wsSide, string) []byte {
	return func(wsSide, string) []byte { return frame(true, 0, op, true, payload, -1) }
}

func closeCode(code uint16) func(wsSide, string) []byte {
	return ctl(opClose, binary.BigEndian.AppendUint16(nil, code))
}

// answersEveryClose is why a close with another code is tolerated for a bad close code.
const answersEveryClose = "a stack that answers every client's close, whatever its code, with a close of its own"

func wsAbuses() []wsAbuse {
	return []wsAbuse{
		{name: "a text frame of invalid UTF-8 → close 1007 (tolerated: read leniently)",
			frame: func(s wsSide, name string) []byte {
				return frame(true, 0, opText, true, notUTF8(s.message(name, "bad ~~~ utf-8")), -1)
			},
			accept: staysOrCloses("a stack that decodes text with replacement characters before the application sees it", closeBadData)},
		{name: "a binary frame: ignored, or close 1003",
			frame: func(s wsSide, name string) []byte {
				return frame(true, 0, opBinary, true, s.message(name, "binary"), -1)
			},
			accept: staysOrCloses("", closeUnsupported)},
		{name: "a message in three fragments (continuation frames)", frame: fragments, accept: reassembled},
		{name: "a ping is answered with its pong", frame: ctl(opPing, []byte("arena-ping")), accept: pongs},
		{name: "an unsolicited pong is ignored", frame: ctl(opPong, []byte("unasked")), accept: stays},
		{name: "a ping of 126 bytes (control frames stop at 125) → close 1002 (tolerated: ignored, silent)",
			frame: ctl(opPing, bytes.Repeat([]byte("p"), 126)), accept: staysClosesOrFallsSilent("a stack that reads a control frame's length from its first byte alone", closeProtocol)},
		{name: "an unmasked client frame → close 1002",
			frame: func(s wsSide, name string) []byte {
				return frame(true, 0, opText, false, s.message(name, "unmasked"), -1)
			},
			accept: closesWith(closeProtocol)},
		{name: "RSV1 set with no extension agreed → close 1002 (tolerated: ignored)",
			frame:  func(s wsSide, name string) []byte { return frame(true, 4, opText, true, s.message(name, "rsv"), -1) },
			accept: staysOrCloses("a stack that does not look at the reserved bits", closeProtocol)},
		{name: "close code 999 → close 1002 (tolerated: another close)", frame: closeCode(999), accept: closesAny(answersEveryClose, closeProtocol)},
		{name: "close code 1004 (reserved) → close 1002 (tolerated: another close)", frame: closeCode(1004), accept: closesAny(answersEveryClose, closeProtocol)},
		{name: "a close with no status is answered with a close", frame: ctl(opClose, nil), accept: echoesClose},
		{name: "a frame header announcing 2^63 bytes → close 1002 or 1009",
			frame: func(wsSide, string) []byte { return bigHeader() }, accept: closesWith(closeProtocol, closeTooBig)},
	}
}

// message is a chat message from name (any text does on /stream, which ignores it).
func (s wsSide) message(name, text string) []byte {
	b, _ := json.Marshal(map[string]string{"name": name, "chat": protoRoom, "message": text})
	return b
}

// notUTF8 puts bytes that are no UTF-8 where msg has "~~~" (json.Marshal would mend them).
func notUTF8(msg []byte) []byte {
	return bytes.Replace(msg, []byte("~~~"), []byte{0xff, 0xfe, 0xfd}, 1)
}

// fragments sends a message as a text frame and two continuations.
func fragments(s wsSide, name string) []byte {
	msg := s.message(name, "one message in three fragments")
	a, b := len(msg)/3, 2*len(msg)/3
	out := frame(false, 0, opText, true, msg[:a], -1)
	out = append(out, frame(false, 0, opCont, true, msg[a:b], -1)...)
	return append(out, frame(true, 0, opCont, true, msg[b:], -1)...)
}

// reassembled accepts the fragments taken as one message: on /chat delivered whole to the
// sender, on /stream ignored with the stream going on.
func reassembled(side wsSide, w *rawWS, name string) error {
	if side.group == GroupChat {
		if err := w.until(chatFrom(name, "one message in three fragments")); err != nil {
			return fmt.Errorf("the message sent in fragments did not come back whole: %v", err)
		}
	}
	return side.alive(w, name)
}

// protoRoom is the room of the /chat protocol checks.
const protoRoom = "protocol"

// chatFrom matches a room message from name with text.
func chatFrom(name, text string) func(wsFrame) bool {
	return func(f wsFrame) bool {
		if f.op != opText {
			return false
		}
		var m chat.Frame
		return json.Unmarshal(f.payload, &m) == nil && !m.IsSystem() && m.Name == name && m.Message == text
	}
}

// protocolChecks sends every wsAbuse to side on a connection of its own, then proves the
// others unaffected and the server ready and whole.
func protocolChecks(ctx context.Context, s *Server, side wsSide, err error) []Check {
	prefix := side.group + ": "
	if err != nil {
		return []Check{{Group: side.group, Name: prefix + "protocol checks: the others join", Detail: err.Error()}}
	}
	defer side.done()
	var out []Check
	for i, a := range wsAbuses() {
		if ctx.Err() != nil {
			break
		}
		start := time.Now()
		name := fmt.Sprintf("mallory%d", i+1)
		err := func() error {
			w, err := side.open(ctx, name)
			if err != nil {
				return err
			}
			defer w.close()
			if err := w.send(a.frame(side, name)); err != nil {
				return fmt.Errorf("sending: %w", err)
			}
			answer := a.accept(side, w, name)
			var tol tolerated
			if answer != nil && !errors.As(answer, &tol) {
				return answer
			}
			if err := side.others(a.name); err != nil {
				return err
			}
			return answer
		}()
		var tol tolerated
		c := Check{Group: side.group, Name: prefix + a.name, OK: err == nil || errors.As(err, &tol), Took: time.Since(start)}
		if err != nil {
			c.Detail = err.Error()
		}
		out = append(out, c, s.after(ctx, side.group, prefix+a.name))
	}
	return out
}

// chatSide is /chat for the protocol checks: each abuser joins the protocol room where two
// members talk; alive is the abuser hearing its own message, the others are those two.
func chatSide(ctx context.Context, addr string) (wsSide, error) {
	peggy, err := joinRoom(ctx, addr, "peggy", protoRoom)
	if err != nil {
		return wsSide{}, err
	}
	quinn, err := joinRoom(ctx, addr, "quinn", protoRoom)
	if err != nil {
		peggy.c.Close()
		return wsSide{}, err
	}
	side := wsSide{group: GroupChat}
	side.open = func(ctx context.Context, name string) (*rawWS, error) {
		w, err := dialRaw(ctx, addr, "/chat")
		if err != nil {
			return nil, err
		}
		join, _ := json.Marshal(map[string]string{"name": name, "chat": protoRoom})
		if err := w.text(join); err != nil {
			w.close()
			return nil, err
		}
		if err := side.alive(w, name); err != nil {
			w.close()
			return nil, fmt.Errorf("%s joined but did not hear itself: %w", name, err)
		}
		return w, nil
	}
	said := 0
	side.alive = func(w *rawWS, name string) error {
		said++
		text := fmt.Sprintf("alive %d", said)
		if err := w.text(side.message(name, text)); err != nil {
			return err
		}
		return w.until(chatFrom(name, text))
	}
	side.others = func(what string) error {
		if err := stillTalking(peggy, quinn, what); err != nil {
			return err
		}
		return stillTalking(quinn, peggy, what)
	}
	side.done = func() { peggy.c.Close(); quinn.c.Close() }
	return side, nil
}

// streamSide is /stream for the protocol checks: alive is five more messages on the
// abuser's stream, the others a stream opened before them all, still flowing.
func streamSide(ctx context.Context, addr string) (wsSide, error) {
	const path = "/stream?rate=100&size=64"
	other, err := dial(ctx, addr, path)
	if err != nil {
		return wsSide{}, err
	}
	side := wsSide{group: GroupStream}
	side.open = func(ctx context.Context, _ string) (*rawWS, error) {
		w, err := dialRaw(ctx, addr, path)
		if err != nil {
			return nil, err
		}
		if err := side.alive(w, ""); err != nil {
			w.close()
			return nil, err
		}
		return w, nil
	}
	side.alive = func(w *rawWS, _ string) error {
		for range 5 {
			if err := w.until(func(f wsFrame) bool { return f.op == opText }); err != nil {
				return err
			}
		}
		return nil
	}
	side.others = func(what string) error {
		_ = other.SetReadDeadline(time.Now().Add(chatWait))
		for range 5 {
			if _, err := other.ReadMessage(); err != nil {
				return fmt.Errorf("another client's stream stopped (%s): %w", what, err)
			}
		}
		return nil
	}
	side.done = func() { other.Close() }
	return side, nil
}
