package engine

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// A response the parser must frame: its bytes, the status, body length and connection fate
// it must report, whether it is framed by the server's close (complete only at eof), and
// whether it answers a HEAD request.
type framed struct {
	name       string
	raw        string
	status     int
	length     int64
	close      bool
	untilClose bool
	head       bool
}

var framedResponses = []framed{
	{name: "content-length", raw: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nhello world", status: 200, length: 11},
	{name: "zero length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", status: 200},
	{name: "length header in odd case and spacing", raw: "HTTP/1.1 201 Created\r\ncOnTeNt-LeNgTh:   3  \r\n\r\nabc", status: 201, length: 3},
	{name: "chunked",
		raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"5\r\nhello\r\n" +
			"1;a=b\r\n \r\n" + // a chunk extension
			"A\r\n0123456789\r\n" + // upper-case hex
			"1f;name=\"quoted\";x\r\n" + strings.Repeat("z", 31) + "\r\n" +
			"0\r\nX-Trailer: yes\r\nX-Other: also\r\n\r\n", // trailers
		status: 200, length: 47},
	{name: "chunked, no trailer", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", status: 200, length: 3},
	{name: "chunked wins over a content-length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: Chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", status: 200, length: 3},
	{name: "connection close with length", raw: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", status: 200, length: 2, close: true},
	{name: "http/1.0", raw: "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", status: 200, length: 2, close: true},
	{name: "http/1.0 keep-alive", raw: "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok", status: 200, length: 2},
	{name: "until close", raw: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nthe body runs until the server closes", status: 200, length: 37, close: true, untilClose: true},
	{name: "204", raw: "HTTP/1.1 204 No Content\r\nDate: x\r\n\r\n", status: 204},
	{name: "304 with the representation's length", raw: "HTTP/1.1 304 Not Modified\r\nContent-Length: 1234\r\n\r\n", status: 304},
	{name: "100 continue then 200", raw: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbody", status: 200, length: 4},
	{name: "interim then close", raw: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx", status: 404, length: 1, close: true},
	{name: "head with a length", raw: "HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n", status: 200, head: true},
	{name: "head, chunked", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", status: 200, head: true},
	{name: "500", raw: "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 3\r\n\r\nbad", status: 500, length: 3},
	{name: "no reason phrase", raw: "HTTP/1.1 200\r\nContent-Length: 1\r\n\r\n.", status: 200, length: 1},
}

// feedAll feeds parts in order, as reads would deliver them, and checks that the parser
// takes each part whole until the response is complete, and completes at its last byte.
func feedAll(t *testing.T, r framed, parts [][]byte) {
	t.Helper()
	var p parser
	p.reset(r.head)
	total := 0
	for i, b := range parts {
		used, done, err := p.feed(b)
		if err != nil {
			t.Fatalf("part %d (%q): %v", i, b, err)
		}
		total += used
		last := i == len(parts)-1
		if done != (last && !r.untilClose) {
			t.Fatalf("part %d of %d (%q): done = %v", i, len(parts), b, done)
		}
		if used != len(b) {
			t.Fatalf("part %d (%q): used %d of %d", i, b, used, len(b))
		}
	}
	if total != len(r.raw) {
		t.Fatalf("used %d bytes of %d", total, len(r.raw))
	}
	if got := p.eof(); got != r.untilClose {
		t.Fatalf("eof() = %v: a close would %s the response", got, map[bool]string{true: "complete", false: "not complete"}[got])
	}
	if p.status != r.status || p.close != r.close || p.length != r.length {
		t.Fatalf("status %d length %d close %v; want %d %d %v", p.status, p.length, p.close, r.status, r.length, r.close)
	}
}

func TestParserFramesEachResponseHoweverTheReadsSplitIt(t *testing.T) {
	for _, r := range framedResponses {
		t.Run(r.name, func(t *testing.T) {
			raw := []byte(r.raw)
			feedAll(t, r, [][]byte{raw})
			for i := 1; i < len(raw); i++ {
				feedAll(t, r, [][]byte{raw[:i], raw[i:]})
			}
			bytewise := make([][]byte, len(raw))
			for i := range raw {
				bytewise[i] = raw[i : i+1]
			}
			feedAll(t, r, bytewise)
		})
	}
}

// A response followed by the next in the same read: the parser stops at the first one's
// last byte, leaves the rest unread, and after a reset frames the second from there.
func TestParserStopsAtTheEndOfAResponseFollowedByAnother(t *testing.T) {
	next := "HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nnop"
	for _, r := range framedResponses {
		if r.untilClose {
			continue // its body takes every byte that follows
		}
		t.Run(r.name, func(t *testing.T) {
			buf := []byte(r.raw + next)
			for split := 1; split <= len(buf); split++ {
				var p parser
				p.reset(r.head)
				used, done, err := p.feed(buf[:split])
				if err == nil && !done {
					if used != split {
						t.Fatalf("split %d: used %d of an incomplete response's %d", split, used, split)
					}
					var more int
					more, done, err = p.feed(buf[split:])
					used += more
				}
				if err != nil || !done || used != len(r.raw) {
					t.Fatalf("split %d: used %d done %v err %v; want %d, true", split, used, done, err, len(r.raw))
				}
				if p.status != r.status {
					t.Fatalf("status %d; want %d", p.status, r.status)
				}
				p.reset(false)
				used, done, err = p.feed(buf[len(r.raw):])
				if err != nil || !done || used != len(next) || p.status != 404 {
					t.Fatalf("second response: used %d done %v err %v status %d", used, done, err, p.status)
				}
			}
		})
	}
}

// A reset parser frames the next response from scratch, even when the last one ended
// with a head split across reads (the kept head bytes must not leak into the next).
func TestParserResetForgetsTheLastResponse(t *testing.T) {
	var p parser
	p.reset(false)
	if _, done, err := p.feed([]byte("HTTP/1.1 500 Oops\r\nConnection: cl")); done || err != nil {
		t.Fatalf("done %v err %v on half a head", done, err)
	}
	p.reset(false)
	raw := "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
	used, done, err := p.feed([]byte(raw))
	if err != nil || !done || used != len(raw) || p.status != 200 || p.close {
		t.Fatalf("used %d done %v err %v status %d close %v", used, done, err, p.status, p.close)
	}
}

func TestParserRejectsWhatIsNotHTTP(t *testing.T) {
	for _, c := range []struct {
		name, raw string
		want      error
	}{
		{"not http", "hello\r\n\r\n", errGarbage},
		{"not http, long first line", "NOT HTTP AT ALL\r\n\r\n", errGarbage},
		{"http/2 status line", "HTTP/2 200 OK\r\n\r\n", errGarbage},
		{"letter in the status", "HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n", errGarbage},
		{"two-digit status", "HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n", errGarbage},
		{"four-digit status", "HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n", errGarbage},
		{"status glued to the reason", "HTTP/1.1 200OK\r\nContent-Length: 0\r\n\r\n", errGarbage},
		{"no space after the version", "HTTP/1.1-200 OK\r\n\r\n", errGarbage},
		{"letters in the length", "HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\n", errGarbage},
		{"negative length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", errGarbage},
		{"empty length", "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n", errGarbage},
		{"header without a colon", "HTTP/1.1 200 OK\r\nContent-Length 2\r\n\r\nok", errGarbage},
		{"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", errGarbage},
		{"empty chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\nhello\r\n0\r\n\r\n", errGarbage},
		{"chunk size without its LF", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\rhello\r\n0\r\n\r\n", errGarbage},
		{"no CRLF after chunk data", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n", errGarbage},
		{"CR without LF after chunk data", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\rX0\r\n\r\n", errGarbage},
		{"chunk size overflow", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\n", errGarbage},
		{"trailer line without LF", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: y\rZ\r\n\r\n", errGarbage},
		{"head over 64 KiB", "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", maxHead) + "\r\n", errHeadSize},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw := []byte(c.raw)
			// Whole, and in pieces of every size up to 7 bytes and of 1 KiB: the error comes
			// whatever the reads, and the parser never completes first.
			for _, size := range []int{len(raw), 1, 2, 3, 5, 7, 1 << 10} {
				var p parser
				p.reset(false)
				var err error
				for off := 0; off < len(raw) && err == nil; off += size {
					var done bool
					_, done, err = p.feed(raw[off:min(off+size, len(raw))])
					if done {
						t.Fatalf("pieces of %d: complete (status %d) at %d", size, p.status, off)
					}
				}
				if !errors.Is(err, c.want) {
					t.Fatalf("pieces of %d: err %v; want %v", size, err, c.want)
				}
			}
		})
	}
}

// A head of 64 KiB and a little less is still a head: the bound is not hit early.
func TestParserTakesAHeadJustUnderTheBound(t *testing.T) {
	raw := []byte("HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", maxHead-100) + "\r\nContent-Length: 2\r\n\r\nok")
	for _, size := range []int{len(raw), 4096, 1000} {
		var p parser
		p.reset(false)
		total := 0
		var done bool
		for off := 0; off < len(raw); off += size {
			used, d, err := p.feed(raw[off:min(off+size, len(raw))])
			if err != nil {
				t.Fatalf("pieces of %d: %v", size, err)
			}
			total, done = total+used, d
		}
		if !done || total != len(raw) || p.status != 200 {
			t.Fatalf("pieces of %d: done %v used %d of %d status %d", size, done, total, len(raw), p.status)
		}
	}
}

// The body is skipped by counting, whatever its size: a large Content-Length or chunk
// completes at its last byte over many reads of the engine's buffer size.
func TestParserSkipsLargeBodiesAcrossReads(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 200_000)
	for _, raw := range [][]byte{
		append([]byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", len(body))), body...),
		append(append([]byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n", len(body))), body...), "\r\n0\r\n\r\n"...),
	} {
		var p parser
		p.reset(false)
		total := 0
		for off := 0; off < len(raw); off += 64 << 10 {
			part := raw[off:min(off+64<<10, len(raw))]
			used, done, err := p.feed(part)
			total += used
			if err != nil || done != (off+len(part) == len(raw)) {
				t.Fatalf("at %d: done %v err %v", off, done, err)
			}
		}
		if total != len(raw) {
			t.Fatalf("used %d of %d", total, len(raw))
		}
	}
}
