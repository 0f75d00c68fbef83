package lab

import (
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/chat"
	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
)

func TestClientBound(t *testing.T) {
	level := load.OpenLoop{Streams: []load.Stream{
		{Tag: "fast", Pacer: load.PerSecond(10)},
		{Tag: "probe", Pacer: load.PerSecond(1)},
		{Tag: "bounded", Pacer: load.PerSecond(100), Connections: 4},
	}, Duration: time.Minute}.Describe()
	cell := func(cpu float64, late map[string]int64) results.Cell {
		c := results.Cell{Client: results.Resources{}}
		c.Client.Summary.CPUPctMean = cpu
		for tag, sent := range map[string]int64{"fast": 600, "probe": 60, "bounded": 6000} {
			tr := results.Tag{}
			tr.Tag, tr.Sent, tr.Late, tr.MaxLateMs = tag, sent, late[tag], 12
			c.Tags = append(c.Tags, tr)
		}
		return c
	}
	cases := []struct {
		name string
		cell results.Cell
		want bool
		why  string
	}{
		{"quiet", cell(5, nil), false, ""},
		{"one late probe is noise", cell(5, map[string]int64{"probe": 1}), false, ""},
		{"a client falling behind", cell(5, map[string]int64{"fast": 30, "probe": 3}), true, "33 of 660 sends late"},
		{"a bounded stream's backlog is the server's", cell(5, map[string]int64{"bounded": 3000}), false, ""},
		{"a busy client", cell(95, nil), true, "client CPU 95%"},
	}
	for _, c := range cases {
		got, why := clientBound(c.cell, level, 1)
		if got != c.want || !strings.Contains(why, c.why) {
			t.Errorf("%s: bound=%v why=%q; want %v and %q", c.name, got, why, c.want, c.why)
		}
	}
	// The lab's database and downstream run on the client's cores: their CPU counts with its.
	helped := cell(40, nil)
	helped.Database = &results.Resources{Summary: results.Usage{CPUPctMean: 45}}
	helped.Downstream = &results.Resources{Summary: results.Usage{CPUPctMean: 10}}
	if got, why := clientBound(helped, level, 1); !got || !strings.Contains(why, "client CPU 40% + downstream 10% + database 45% of 1 core(s)") {
		t.Errorf("client 40%% beside database 45%% and downstream 10%%: bound=%v why=%q", got, why)
	}
	helped.Database.Summary.CPUPctMean = 20
	if got, why := clientBound(helped, level, 1); got {
		t.Errorf("client 40%% beside database 20%% and downstream 10%%: bound, %q", why)
	}
	if got, _ := clientBound(cell(95, nil), level, 2); got {
		t.Error("95% of one core is not busy for a two-core client")
	}
}

// A chat cell whose members sent late is withheld as an HTTP cell whose client fell behind
// is: its late sends against the sends it made (its tag's Sent counts deliveries, ten of them
// a send here), and none when its sends ran on time.
func TestClientBoundChatsLateSends(t *testing.T) {
	level := chat.Load{Tag: "chat", Rooms: 2, Users: 10, Messages: 50, Period: 100 * time.Millisecond}.Describe()
	cell := func(late, sends int64) results.Cell {
		c := results.Cell{}
		tr := results.Tag{}
		tr.Tag, tr.Sent, tr.Completed, tr.Late = "chat", 10*sends, 10*sends, late
		c.Tags = append(c.Tags, tr)
		if err := c.PutFigures(&chat.Figures{Members: 20, Sends: sends}); err != nil {
			t.Fatal(err)
		}
		return c
	}
	if got, why := clientBound(cell(30, 1000), level, 1); !got || why != "30 of 1000 sends late" {
		t.Errorf("30 of 1000 chat sends late: bound=%v why=%q; want bound, 30 of 1000 sends late", got, why)
	}
	if got, why := clientBound(cell(5, 1000), level, 1); got {
		t.Errorf("5 of 1000 chat sends late (0.5 %%): bound, %q", why)
	}
	if got, why := clientBound(cell(0, 1000), level, 1); got {
		t.Errorf("chat sends on time: bound, %q", why)
	}
}
