package chat

import (
	"context"
	"testing"
	"time"
)

func TestReferenceServerBroadcastsToTheRoom(t *testing.T) {
	s, err := StartServer("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	a, _ := Dial(ctx, s.Addr())
	b, _ := Dial(ctx, s.Addr())
	defer a.Close()
	defer b.Close()
	_ = a.Join("a", "r")
	_ = b.Join("b", "r")
	time.Sleep(100 * time.Millisecond)
	if err := a.Send("a", "r", "hi"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Conn{a, b} {
		f, err := c.Read(2 * time.Second)
		if err != nil || f.Name != "a" || f.Chat != "r" || f.Message != "hi" {
			t.Fatalf("got %+v, %v; want a's hi", f, err)
		}
	}
}
