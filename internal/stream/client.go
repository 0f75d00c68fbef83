package stream

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// A Conn is one /stream client: a WebSocket read by hand, because the load reads millions of
// small frames a second on one core, into one buffer, with no allocation per message.
type Conn struct {
	nc  net.Conn
	br  *bufio.Reader
	wmu sync.Mutex // pongs from the reader, the close from whoever closes
	buf []byte     // the message being assembled
	ctl [125]byte  // a control frame's payload
	// Arrived is when the last message's last bytes came off the socket: taken once per
	// read from the kernel, since every frame of one read arrived together.
	Arrived time.Time
}

// HandshakeError is a refused upgrade: the server answered HTTP instead.
type HandshakeError struct {
	Status      int
	ContentType string
	Body        []byte
}

func (e *HandshakeError) Error() string {
	return fmt.Sprintf("upgrade refused: HTTP %d %s", e.Status, clip(e.Body))
}

// CloseError is the server's close frame.
type CloseError struct {
	Code   int
	Reason string
}

func (e *CloseError) Error() string {
	return fmt.Sprintf("closed by the server: %d %s", e.Code, e.Reason)
}

// Dial opens ws://addr<path>; bufSize is the read buffer (small for a slow reader, so that it
// does not drain the socket faster than it reads).
func Dial(ctx context.Context, addr, path string, bufSize int) (*Conn, error) {
	d := net.Dialer{Timeout: 10 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	} else {
		_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	}
	keyRaw := make([]byte, 16)
	_, _ = rand.Read(keyRaw)
	key := base64.StdEncoding.EncodeToString(keyRaw)
	req := "GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + key + "\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := io.WriteString(nc, req); err != nil {
		nc.Close()
		return nil, err
	}
	c := &Conn{nc: nc, buf: make([]byte, 0, 1024)}
	br := bufio.NewReaderSize(stamped{nc, &c.Arrived}, bufSize)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("reading the upgrade answer: %w", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		nc.Close()
		return nil, &HandshakeError{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: body}
	}
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if got := resp.Header.Get("Sec-WebSocket-Accept"); got != base64.StdEncoding.EncodeToString(sum[:]) {
		nc.Close()
		return nil, fmt.Errorf("upgrade answer has a wrong Sec-WebSocket-Accept %q", got)
	}
	_ = nc.SetDeadline(time.Time{})
	c.br = br
	return c, nil
}

// stamped notes when each read from the kernel returned: a message's arrival is the read
// that completed it.
type stamped struct {
	net.Conn
	at *time.Time
}

func (s stamped) Read(b []byte) (int, error) {
	n, err := s.Conn.Read(b)
	if n > 0 {
		*s.at = time.Now()
	}
	return n, err
}

// LimitReceiveBuffer sets the socket's receive buffer (SO_RCVBUF), which turns the kernel's
// autotuning off: a slow reader on loopback would otherwise let the kernel hold megabytes it
// has not read, and the server's memory would show none of it.
func (c *Conn) LimitReceiveBuffer(bytes int) error {
	if tc, ok := c.nc.(*net.TCPConn); ok {
		return tc.SetReadBuffer(bytes)
	}
	return nil
}

// SetReadDeadline bounds the next reads.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.nc.SetReadDeadline(t) }

// ReadMessage returns the next text message, assembled from its fragments; the slice is
// valid until the next call. Pings are answered; a close frame ends it with a *CloseError.
// A frame RFC 6455 forbids a server to send is an error (FuzzReadMessage holds it to this).
func (c *Conn) ReadMessage() ([]byte, error) {
	c.buf = c.buf[:0]
	fragmented := false // a text frame without FIN came: continuations follow
	for {
		h, err := ReadFrameHeader(c.br)
		if err != nil {
			return nil, err
		}
		if h.Masked {
			return nil, errors.New("the server masked a frame (RFC 6455 5.1 forbids it)")
		}
		if h.RSV != 0 {
			return nil, fmt.Errorf("a frame with reserved bits %03b set: no extension was agreed", h.RSV)
		}
		fin, op, n := h.Fin, h.Op, int64(h.Len)
		if h.Len > 1<<24 || int64(len(c.buf))+n > 1<<24 {
			return nil, fmt.Errorf("a frame of %d bytes: over the client's 16 MiB limit", h.Len)
		}
		if op >= 8 { // control frames may come between fragments
			if err := c.control(h); err != nil {
				return nil, err
			}
			continue
		}
		switch {
		case op != 0 && op != 1:
			return nil, fmt.Errorf("a frame of opcode %d: /stream sends text frames", op)
		case op == 0 && !fragmented:
			return nil, errors.New("a continuation frame with no message to continue")
		case op == 1 && fragmented:
			return nil, errors.New("a text frame inside a fragmented message")
		}
		at := len(c.buf)
		if need := at + int(n); need > cap(c.buf) {
			grown := make([]byte, at, max(need, 2*cap(c.buf)))
			copy(grown, c.buf)
			c.buf = grown
		}
		c.buf = c.buf[:at+int(n)]
		if _, err := io.ReadFull(c.br, c.buf[at:]); err != nil {
			return nil, err
		}
		if fin {
			return c.buf, nil
		}
		fragmented = true
	}
}

// control reads a control frame's payload and acts on it: a ping is answered, a close ends
// the reading. A control frame is whole and at most 125 bytes (RFC 6455 5.5), so its payload
// fits the Conn's own buffer: an announced 16 MiB ping allocates nothing.
func (c *Conn) control(h FrameHeader) error {
	if h.Len > 125 || !h.Fin || h.Op > 10 {
		return fmt.Errorf("a control frame of opcode %d, %d bytes, fin %v: RFC 6455 5.5 allows 8–10, whole, up to 125 bytes",
			h.Op, h.Len, h.Fin)
	}
	ctl := c.ctl[:h.Len]
	if _, err := io.ReadFull(c.br, ctl); err != nil {
		return err
	}
	switch h.Op {
	case 8:
		ce := &CloseError{Code: 1005}
		if len(ctl) >= 2 {
			ce.Code, ce.Reason = int(binary.BigEndian.Uint16(ctl)), string(ctl[2:])
		}
		return ce
	case 9:
		_ = c.write(10, ctl)
	}
	return nil
}

// FrameHeader is a WebSocket frame's header (RFC 6455 5.2); the mask key, when there is
// one, follows it unread.
type FrameHeader struct {
	Fin    bool
	RSV    byte // the three reserved bits, 0 unless an extension was agreed
	Op     byte
	Masked bool
	Len    uint64 // as announced: the top bit of a 64-bit length must be 0, and may not be
}

// ReadFrameHeader reads a frame's header, a byte at a time: bytes read into a slice through
// an interface would go to the heap, an allocation per frame on the client's hot path.
func ReadFrameHeader(r io.ByteReader) (FrameHeader, error) {
	var h [10]byte
	if err := readBytes(r, h[:2]); err != nil {
		return FrameHeader{}, err
	}
	fh := FrameHeader{Fin: h[0]&0x80 != 0, RSV: h[0] >> 4 & 7, Op: h[0] & 0x0f, Masked: h[1]&0x80 != 0, Len: uint64(h[1] & 0x7f)}
	switch fh.Len {
	case 126:
		if err := readBytes(r, h[2:4]); err != nil {
			return fh, err
		}
		fh.Len = uint64(binary.BigEndian.Uint16(h[2:4]))
	case 127:
		if err := readBytes(r, h[2:10]); err != nil {
			return fh, err
		}
		fh.Len = binary.BigEndian.Uint64(h[2:10])
	}
	return fh, nil
}

// readBytes fills b from r as io.ReadFull does: io.EOF if r ended before b's first byte,
// io.ErrUnexpectedEOF if after.
func readBytes(r io.ByteReader, b []byte) error {
	for i := range b {
		c, err := r.ReadByte()
		if err == io.EOF && i > 0 {
			return io.ErrUnexpectedEOF
		}
		if err != nil {
			return err
		}
		b[i] = c
	}
	return nil
}

// Raw hands over the connection after the handshake, for verify's protocol checks, which
// write frames no client may send and read every frame the server sends, control included.
func (c *Conn) Raw() (net.Conn, *bufio.Reader) { return c.nc, c.br }

// write sends one masked frame (clients must mask).
func (c *Conn) write(op byte, payload []byte) error {
	if len(payload) > 125 {
		return errors.New("control payload over 125 bytes")
	}
	frame := make([]byte, 0, 6+len(payload))
	frame = append(frame, 0x80|op, 0x80|byte(len(payload)))
	var mask [4]byte
	_, _ = rand.Read(mask[:])
	frame = append(frame, mask[:]...)
	for i, b := range payload {
		frame = append(frame, b^mask[i%4])
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_ = c.nc.SetWriteDeadline(time.Now().Add(2 * time.Second))
	_, err := c.nc.Write(frame)
	return err
}

// WriteText sends a text frame (the server ignores it; verify checks that it does).
func (c *Conn) WriteText(text string) error { return c.write(1, []byte(text)) }

// Close sends a normal close and closes the connection without waiting for the answer: the
// server may have megabytes queued in front of its close frame.
func (c *Conn) Close() error {
	_ = c.write(8, []byte{0x03, 0xe8})
	return c.nc.Close()
}

// Path is the request path for rate and size.
func Path(rate, size int) string { return fmt.Sprintf("/stream?rate=%d&size=%d", rate, size) }
