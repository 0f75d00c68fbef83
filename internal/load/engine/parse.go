package engine

import (
	"bytes"
	"errors"
	"strings"
)

// parser reads one HTTP/1.1 response at a time, fed whatever each read returned: status
// line and headers (kept only when a read ends inside them), then the body skipped by
// Content-Length, by chunks, or until the server closes. It keeps the status, the body's
// length, and whether the connection may carry the next request; nothing of the body is
// copied.
type parser struct {
	state   uint8
	head    []byte // a head split across reads, until its blank line arrives
	status  int
	length  int64 // the body's length: its Content-Length, its chunks' sizes so far, or the bytes until close so far
	remain  int64 // body or chunk bytes still to skip
	close   bool  // the server ends the connection after this response
	noBody  bool  // the request was HEAD: no body whatever the headers say
	hexSeen bool
	lineLen int  // a trailer line's length so far
	colon   bool // the trailer line so far holds its colon
}

const (
	stHead uint8 = iota
	stLength
	stChunkSize
	stChunkSizeWS // whitespace after the size: only more of it, an extension or the line's end may follow
	stChunkExt
	stChunkSizeLF
	stChunkData
	stChunkDataCR
	stChunkDataLF
	stTrailer
	stTrailerLF
	stUntilClose
	stDone
)

// maxHead bounds a response's head: a server that sends more without a blank line is not
// answering HTTP.
const maxHead = 64 << 10

var (
	errGarbage  = errors.New("response is not HTTP/1.x")
	errHeadSize = errors.New("response head over 64 KiB")
	crlfcrlf    = []byte("\r\n\r\n")
)

// reset prepares for the next response on the connection.
func (p *parser) reset(head bool) {
	*p = parser{head: p.head[:0], noBody: head}
}

// feed consumes b and says how much of it belongs to this response and whether the
// response is complete. A server's extra bytes after a complete response are left unread.
func (p *parser) feed(b []byte) (used int, done bool, err error) {
	for used < len(b) || p.state == stDone {
		switch p.state {
		case stDone:
			return used, true, nil
		case stHead:
			n, err := p.feedHead(b[used:])
			used += n
			if err != nil {
				return used, false, err
			}
			// Still in a head: either it took all of b (the head goes on in the next
			// read), or an interim 1xx answer ended and the real head follows in b.
		case stLength, stChunkData, stUntilClose:
			n := int64(len(b) - used)
			if p.state == stUntilClose {
				p.length += n
				return len(b), false, nil
			}
			if n > p.remain {
				n = p.remain
			}
			used += int(n)
			p.remain -= n
			if p.remain == 0 {
				if p.state == stLength {
					p.state = stDone
				} else {
					p.state = stChunkDataCR
				}
			}
		default:
			if err := p.chunkByte(b[used]); err != nil {
				return used, false, err
			}
			used++
		}
	}
	return used, false, nil
}

// eof is the server closing the connection: it completes a body read until close.
func (p *parser) eof() bool { return p.state == stUntilClose }

func (p *parser) feedHead(b []byte) (int, error) {
	var head []byte
	var used int
	if len(p.head) == 0 {
		i := bytes.Index(b, crlfcrlf)
		if i < 0 {
			if len(b) > maxHead {
				return len(b), errHeadSize
			}
			p.head = append(p.head, b...)
			return len(b), nil
		}
		head, used = b[:i+4], i+4
		if len(head) > maxHead { // the same bound however the reads cut the head
			return used, errHeadSize
		}
	} else {
		// The blank line may straddle the reads: look for it from three bytes back.
		old := len(p.head)
		p.head = append(p.head, b...)
		from := max(old-3, 0)
		i := bytes.Index(p.head[from:], crlfcrlf)
		if i < 0 {
			if len(p.head) > maxHead {
				return len(b), errHeadSize
			}
			return len(b), nil
		}
		end := from + i + 4
		head, used = p.head[:end], end-old
		if end > maxHead {
			return used, errHeadSize
		}
	}
	if err := p.parseHead(head); err != nil {
		return used, err
	}
	p.head = p.head[:0]
	return used, nil
}

// parseHead reads the status line and the three headers that decide the body's framing
// and the connection's fate. What net/http's client would refuse is refused here too
// (FuzzParser holds the two together): a response framed two ways is no answer.
func (p *parser) parseHead(h []byte) error {
	// "HTTP/1.1 200 OK\r\n": three digits, then the reason's space or the line's end.
	if len(h) < 14 || !bytes.HasPrefix(h, []byte("HTTP/1.")) || h[7] < '0' || h[7] > '9' || h[8] != ' ' ||
		(h[12] != ' ' && (h[12] != '\r' || h[13] != '\n')) {
		return errGarbage
	}
	http10 := h[7] == '0'
	code := 0
	for _, c := range h[9:12] {
		if c < '0' || c > '9' {
			return errGarbage
		}
		code = code*10 + int(c-'0')
	}
	p.status = code
	f := framing{length: -1, keepAlive: !http10}
	line := h[bytes.IndexByte(h, '\n')+1:]
	for len(line) > 2 {
		end := bytes.IndexByte(line, '\n')
		if end < 0 {
			return errGarbage
		}
		if err := f.field(line[:end]); err != nil {
			return err
		}
		line = line[end+1:]
	}
	if f.chunked && http10 { // RFC 9112 6.1: an HTTP/1.0 message's framing is then faulty
		return errGarbage
	}
	p.close = !f.keepAlive
	switch {
	case code >= 100 && code < 200:
		// An interim answer (100 Continue): the real one follows on the same connection.
		noBody := p.noBody
		p.reset(noBody)
		return nil
	case p.noBody || code == 204 || code == 304:
		p.state = stDone
	case f.chunked:
		p.state = stChunkSize
	case f.length >= 0:
		p.remain, p.length = f.length, f.length
		p.state = stLength
		if f.length == 0 {
			p.state = stDone
		}
	default:
		p.close = true
		p.state = stUntilClose
	}
	return nil
}

// framing is what a head's fields say of its body and its connection.
type framing struct {
	length    int64 // -1: no Content-Length
	chunked   bool
	keepAlive bool
}

// field reads one header line (its CR included, when it has one).
func (f *framing) field(line []byte) error {
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return errGarbage
	}
	for _, c := range line[:colon] { // a name is a token: no folded line, no space before the colon
		if !isTchar(c) {
			return errGarbage
		}
	}
	for i, c := range line[colon:] {
		if (c < ' ' && c != '\t' && (c != '\r' || colon+i != len(line)-1)) || c == 0x7f {
			return errGarbage
		}
	}
	name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
	switch {
	case equalFold(name, "content-length"):
		n, ok := parseLength(value)
		if !ok || (f.length >= 0 && n != f.length) { // two lengths: which is the body's?
			return errGarbage
		}
		f.length = n
	case equalFold(name, "transfer-encoding"):
		// Only chunked, once: any other coding would leave the body's end unknown.
		if f.chunked || !equalFold(value, "chunked") {
			return errGarbage
		}
		f.chunked = true
	case equalFold(name, "connection"):
		if containsFold(value, "close") {
			f.keepAlive = false
		} else if containsFold(value, "keep-alive") {
			f.keepAlive = true
		}
	}
	return nil
}

// chunkByte steps the chunked framing's small grammar by one byte.
func (p *parser) chunkByte(c byte) error {
	switch p.state {
	case stChunkSize:
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
			if p.remain > 1<<40 {
				return errGarbage
			}
			p.remain = p.remain<<4 | int64(unhex(c))
			p.hexSeen = true
		case c == ';':
			p.state = stChunkExt
		case c == ' ' || c == '\t':
			p.state = stChunkSizeWS
		case c == '\r':
			p.state = stChunkSizeLF
		default:
			return errGarbage
		}
	case stChunkSizeWS:
		switch c {
		case ' ', '\t':
		case '\r':
			p.state = stChunkSizeLF
		default:
			return errGarbage
		}
	case stChunkExt:
		switch c {
		case '\r':
			p.state = stChunkSizeLF
		case '\n': // the line ends only at CRLF
			return errGarbage
		}
	case stChunkSizeLF:
		if c != '\n' || !p.hexSeen {
			return errGarbage
		}
		p.hexSeen = false
		p.length += p.remain
		if p.remain == 0 {
			p.state, p.lineLen, p.colon = stTrailer, 0, false
		} else {
			p.state = stChunkData
		}
	case stChunkDataCR:
		if c != '\r' {
			return errGarbage
		}
		p.state = stChunkDataLF
	case stChunkDataLF:
		if c != '\n' {
			return errGarbage
		}
		p.state, p.remain = stChunkSize, 0
	case stTrailer, stTrailerLF:
		return p.trailerByte(c)
	}
	return nil
}

// trailerByte steps the trailer's lines by one byte: each a field (a token's name, its
// colon, no control bytes), until the empty line that ends the response.
func (p *parser) trailerByte(c byte) error {
	if p.state == stTrailerLF {
		if c != '\n' {
			return errGarbage
		}
		if p.lineLen == 0 {
			p.state = stDone
		} else {
			p.state, p.lineLen, p.colon = stTrailer, 0, false
		}
		return nil
	}
	switch {
	case c == '\r':
		if p.lineLen > 0 && !p.colon {
			return errGarbage
		}
		p.state = stTrailerLF
	case (c < ' ' && c != '\t') || c == 0x7f, p.lineLen == 0 && c == ':', !p.colon && c != ':' && !isTchar(c):
		return errGarbage
	default:
		p.colon = p.colon || c == ':'
		p.lineLen++
	}
	return nil
}

// isTchar says whether c may be in a token, a field's name (RFC 9110 5.6.2).
func isTchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func parseLength(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// equalFold compares an ASCII header name with a lower-case one.
func equalFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

func containsFold(b []byte, lower string) bool {
	for i := 0; i+len(lower) <= len(b); i++ {
		if equalFold(b[i:i+len(lower)], lower) {
			return true
		}
	}
	return false
}
