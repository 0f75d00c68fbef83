package verify

import (
	"bufio"
	"errors"
	"net"
	"strings"
	"testing"
)

// pipeWS is a rawWS whose server side writes serverSends, then holds the connection open.
func pipeWS(t *testing.T, serverSends []byte) *rawWS {
	t.Helper()
	client, server := net.Pipe()
	t.Cleanup(func() { client.Close(); server.Close() })
	go func() { _, _ = server.Write(serverSends) }()
	return &rawWS{nc: client, br: bufio.NewReader(client)}
}

// The answers a protocol check accepts, tolerates and refuses, judged on what a server sent.
func TestProtocolAnswers(t *testing.T) {
	closeFrame := func(code byte) []byte { return []byte{0x88, 2, 0x03, code} } // 0x03e8 = 1000, 0x03ea = 1002
	side := wsSide{alive: func(w *rawWS, _ string) error {
		return w.until(func(f wsFrame) bool { return f.op == opText })
	}}
	for _, tc := range []struct {
		what   string
		sends  []byte
		accept func(wsSide, *rawWS, string) error
		want   string // "ok", "tolerated" or "fails"
	}{
		{"a close 1002 where 1002 is asked", closeFrame(0xea), closesAny(answersEveryClose, closeProtocol), "ok"},
		{"a close 1000 where 1002 is asked", closeFrame(0xe8), closesAny(answersEveryClose, closeProtocol), "tolerated"},
		{"a close 1000 where only 1002 will do", closeFrame(0xe8), closesWith(closeProtocol), "fails"},
		{"a text frame: the connection goes on", []byte{0x81, 2, 'h', 'i'}, staysOrCloses("lenient", closeBadData), "tolerated"},
		{"text that is not UTF-8 sent on", []byte{0x81, 2, 0xff, 0xfe}, staysOrCloses("lenient", closeBadData), "fails"},
		{"a masked frame, then nothing: out of line", []byte{0x81, 0x82, 1, 2, 3, 4, 'h', 'i'}, closesWith(closeProtocol), "tolerated"},
		{"silence where a close is asked", nil, staysOrCloses("lenient", closeProtocol), "fails"},
		{"silence where silence is tolerated", nil, staysClosesOrFallsSilent("misread", closeProtocol), "tolerated"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			if tc.sends == nil && testing.Short() {
				t.Skip("waits out the silence")
			}
			err := tc.accept(side, pipeWS(t, tc.sends), "m")
			var tol tolerated
			got := "fails"
			switch {
			case err == nil:
				got = "ok"
			case errors.As(err, &tol):
				got = "tolerated"
			}
			if got != tc.want {
				t.Errorf("%s (%v), want %s", got, err, tc.want)
			}
			if got == "tolerated" && !strings.HasPrefix(err.Error(), "tolerated: ") {
				t.Errorf("a tolerated answer says %q", err)
			}
		})
	}
}
