// Package stream speaks study 003's push protocol (contenders/README.md, "/stream"): a
// client that reads generated frames fast or slowly, the lab's reference producer, and the
// load that drives many clients and polls the server's /stream/stats.
package stream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// Limits and defaults of the contract.
const (
	DefaultSize = 250
	MinSize     = 16
	MaxSize     = 65536
	MaxRate     = 1000000
	MaxInFlight = 100  // sends in flight per client, with back-pressure
	MaxQueue    = 5000 // messages waiting per client, with back-pressure
	Batch       = 100  // messages per generator turn at rate 0
)

var (
	headSeq = []byte(`{"seq":`)
	headTS  = []byte(`,"ts":`)
	headPad = []byte(`,"pad":"`)
	tail    = []byte(`"}`)
)

// AppendMessage appends the message seq made at ts (µs since the epoch), padded to size
// bytes where size allows, as the contract lays it out.
func AppendMessage(dst []byte, seq, tsMicros int64, size int) []byte {
	start := len(dst)
	dst = append(dst, headSeq...)
	dst = strconv.AppendInt(dst, seq, 10)
	dst = append(dst, headTS...)
	dst = strconv.AppendInt(dst, tsMicros, 10)
	dst = append(dst, headPad...)
	for n := size - (len(dst) - start) - len(tail); n > 0; n-- {
		dst = append(dst, 'x')
	}
	return append(dst, tail...)
}

// ParseHead reads seq and ts from a message cheaply, checking only its frame: the head and
// the tail. It is the load's parser; Check is verify's.
func ParseHead(b []byte) (seq, tsMicros int64, ok bool) {
	if !bytes.HasPrefix(b, headSeq) || !bytes.HasSuffix(b, tail) {
		return 0, 0, false
	}
	i := len(headSeq)
	seq, i, ok = digits(b, i)
	if !ok || !bytes.HasPrefix(b[i:], headTS) {
		return 0, 0, false
	}
	tsMicros, i, ok = digits(b, i+len(headTS))
	if !ok || !bytes.HasPrefix(b[i:], headPad) || i+len(headPad)+len(tail) > len(b) {
		return 0, 0, false
	}
	return seq, tsMicros, true
}

func digits(b []byte, i int) (int64, int, bool) {
	var n int64
	start := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' && i-start < 18 {
		n = n*10 + int64(b[i]-'0')
		i++
	}
	return n, i, i > start
}

// Message is a message read strictly.
type Message struct {
	Seq int64  `json:"seq"`
	TS  int64  `json:"ts"`
	Pad string `json:"pad"`
}

// Check reads a message strictly: valid JSON holding exactly seq, ts and pad in the
// contract's order, no spaces, pad of ASCII letters, and size bytes long (or with an empty
// pad, when size is too short for any).
func Check(b []byte, size int) (Message, error) {
	var m Message
	if !json.Valid(b) {
		return m, fmt.Errorf("not JSON: %s", clip(b))
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("not a stream message: %v: %s", err, clip(b))
	}
	if m.Seq < 0 || m.TS <= 0 {
		return m, fmt.Errorf("seq %d or ts %d out of range: %s", m.Seq, m.TS, clip(b))
	}
	for _, c := range []byte(m.Pad) {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return m, fmt.Errorf("pad holds %q, not only ASCII letters", c)
		}
	}
	want := AppendMessage(nil, m.Seq, m.TS, 0) // the frame with an empty pad
	if len(want) < size && len(b) != size {
		return m, fmt.Errorf("message is %d bytes, asked for %d", len(b), size)
	}
	if len(want) >= size && m.Pad != "" {
		return m, fmt.Errorf("size %d is below the empty-pad frame (%d bytes), so pad must be empty, got %d letters", size, len(want), len(m.Pad))
	}
	if canon := AppendMessage(nil, m.Seq, m.TS, len(b)); !bytes.Equal(canon[:len(canon)-len(m.Pad)-len(tail)], b[:len(b)-len(m.Pad)-len(tail)]) {
		return m, fmt.Errorf("members not as the contract lays them out (seq, ts, pad, no spaces): %s", clip(b))
	}
	return m, nil
}

func clip(b []byte) string {
	if len(b) > 120 {
		return string(b[:120]) + "…"
	}
	return string(b)
}
