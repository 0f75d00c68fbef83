package verify

import (
	"context"
	"strings"
	"testing"

	"github.com/arena-lab/arena/internal/stream"
)

// The /stream checks pass against the lab's reference producer.
func TestStreamChecksPassAgainstTheReferenceServer(t *testing.T) {
	s, err := stream.StartServer("127.0.0.1:0", stream.ServerOptions{Backpressure: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checks := StreamChecks(context.Background(), inProcess(t, s.Addr()))
	if len(checks) < 44 {
		t.Fatalf("%d checks; want every /stream rule", len(checks))
	}
	for _, c := range checks {
		if !c.OK {
			t.Errorf("%s: %s", c.Name, c.Detail)
		}
	}
}

// Without back-pressure nothing is dropped: the check for drop-oldest fails, naming why.
func TestStreamChecksCatchAServerThatNeverDrops(t *testing.T) {
	s, err := stream.StartServer("127.0.0.1:0", stream.ServerOptions{Backpressure: false})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var failed []string
	for _, c := range StreamChecks(context.Background(), inProcess(t, s.Addr())) {
		if !c.OK {
			failed = append(failed, c.Name+": "+c.Detail)
		}
	}
	if len(failed) != 1 || !strings.Contains(failed[0], "dropped") {
		t.Fatalf("failures %q; want only the drop check", failed)
	}
}
