package engine

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"testing"
)

// parsed is what the parser made of a connection's bytes, fed in parts as reads would
// deliver them: how far it read, whether it completed or failed, and what it reported.
type parsed struct {
	used   int
	done   bool
	failed bool
	eof    bool // a close now would complete the response
	status int
	length int64
	close  bool
}

// parseParts feeds parts in order until the response completes or fails, checking on the
// way what the engine relies on: the parser never says it used more than it was given, and
// takes a part whole unless the response ended inside it.
func parseParts(t *testing.T, head bool, parts [][]byte) parsed {
	var p parser
	p.reset(head)
	var out parsed
	for _, b := range parts {
		used, done, err := p.feed(b)
		if used < 0 || used > len(b) {
			t.Fatalf("used %d of a part of %d bytes", used, len(b))
		}
		out.used += used
		if err != nil {
			out.failed = true
			return out
		}
		if done {
			out.done = true
			break
		}
		if used != len(b) {
			t.Fatalf("used %d of %d bytes without completing: the rest of the read is lost", used, len(b))
		}
	}
	out.eof, out.status, out.length, out.close = p.eof(), p.status, p.length, p.close
	return out
}

// FuzzParser holds the response parser to three things, for any bytes however the reads
// split them: the same outcome (status, body length, keep-alive, bytes used) in three
// reads as in one; never a byte used past its input; and a response it completes is one
// net/http reads too, with the same status and body length, so that nothing invalid is
// counted as an answer. pad inserts a header line of that many bytes, to reach the head's
// 64 KiB bound.
func FuzzParser(f *testing.F) {
	for _, r := range framedResponses {
		f.Add([]byte(r.raw), uint16(0), uint32(len(r.raw)/3), uint32(len(r.raw)/2), r.head)
	}
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"), uint16(65500), uint32(30000), uint32(60000), false)
	chunkedWithTrailer := "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5 \r\nhello\r\n0\r\nX: y\r\n\r\n"
	f.Add([]byte(chunkedWithTrailer), uint16(0), uint32(40), uint32(60), false)
	f.Fuzz(func(t *testing.T, raw []byte, pad uint16, cut1, cut2 uint32, head bool) {
		data := padded(raw, int(pad))
		whole := parseParts(t, head, [][]byte{data})
		a, b := int(cut1%uint32(len(data)+1)), int(cut2%uint32(len(data)+1))
		a, b = min(a, b), max(a, b)
		var parts [][]byte
		for _, part := range [][]byte{data[:a], data[a:b], data[b:]} {
			if len(part) > 0 { // a read returns at least a byte; 0 is the server's close
				parts = append(parts, part)
			}
		}
		split := parseParts(t, head, parts)
		if whole.failed != split.failed || (!whole.failed && whole != split) {
			t.Fatalf("fed whole: %+v; fed in reads of %d, %d, %d bytes: %+v", whole, a, b-a, len(data)-b, split)
		}
		switch {
		case whole.done:
			agreeWithNetHTTP(t, data[:whole.used], head, whole)
		case whole.eof:
			agreeWithNetHTTP(t, data, head, whole)
		}
	})
}

// padded is raw with a header line of n bytes after its first line, when n > 0 and raw has one.
func padded(raw []byte, n int) []byte {
	i := bytes.Index(raw, []byte("\r\n"))
	if n == 0 || i < 0 {
		return raw
	}
	line := append(append([]byte("X-Pad: "), bytes.Repeat([]byte("p"), n)...), "\r\n"...)
	return append(append(append([]byte{}, raw[:i+2]...), line...), raw[i+2:]...)
}

// agreeWithNetHTTP reads the bytes the parser completed a response with as net/http's
// client does (interim 1xx answers skipped, as its Transport does): it must find a response
// there too, of the same status and body length.
func agreeWithNetHTTP(t *testing.T, b []byte, head bool, got parsed) {
	t.Helper()
	req := &http.Request{Method: http.MethodGet}
	if head {
		req.Method = http.MethodHead
	}
	br := bufio.NewReader(bytes.NewReader(b))
	for {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			t.Fatalf("the parser completed %q (status %d, length %d); net/http refuses it: %v", b, got.status, got.length, err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		if err != nil {
			t.Fatalf("the parser completed %q (status %d, length %d); net/http refuses its body: %v",
				b, got.status, got.length, err)
		}
		if resp.StatusCode >= 100 && resp.StatusCode < 200 {
			continue
		}
		if resp.StatusCode != got.status || n != got.length {
			t.Fatalf("%q: the parser read status %d, body %d bytes; net/http %d, %d bytes",
				b, got.status, got.length, resp.StatusCode, n)
		}
		return
	}
}
