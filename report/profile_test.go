package report

import (
	"strings"
	"testing"

	"github.com/arena-lab/arena/internal/results"
)

// fixtureProfiled is the downstream fixture run with --profile: each contender's summary at
// level self has its profile and the client's, but spring-webflux-fn's repeats were all
// killed before they wrote theirs.
func fixtureProfiled() *results.Run {
	run := fixtureDownstream()
	run.Scenario.Profiled = true
	stacks := map[string]results.Stacks{
		"vertx": {
			"java.lang.Thread.run;io.netty.channel.nio.NioEventLoop.run;io.vertx.core.http.impl.Http1xServerConnection.handleMessage;com.fasterxml.jackson.core.json.UTF8JsonGenerator.writeString": 40,
			"java.lang.Thread.run;io.netty.channel.nio.NioEventLoop.run;sun.nio.ch.SocketDispatcher.write0":                                                                                         60,
		},
		"spring-webflux": {
			"java.lang.Thread.run;io.netty.channel.epoll.EpollEventLoop.run;reactor.netty.http.server.HttpServerOperations.onInboundNext;io.micrometer.observation.SimpleObservation.start": 30,
			"java.lang.Thread.run;io.netty.channel.epoll.EpollEventLoop.run;org.springframework.web.reactive.DispatcherHandler.handle;<script>alert(1)</script>":                            20,
			"java.lang.Thread.run;io.netty.channel.epoll.EpollEventLoop.run;io.netty.channel.epoll.Native.epollWait":                                                                        50,
		},
	}
	client := results.Stacks{"runtime.goexit;github.com/valyala/fasthttp.(*HostClient).Do;syscall.Syscall": 80, "runtime.goexit;runtime.mallocgc": 20}
	for i := range run.Summary {
		s := &run.Summary[i]
		if s.Level != "self" {
			continue
		}
		if st, ok := stacks[s.Contender]; ok {
			s.Profile = &results.Profile{Tool: "jfr", Samples: st.Samples(), Top: st.Top(results.TopFrames), Flame: st.Flame("all", results.FlameMin)}
			s.ClientProfile = &results.Profile{Tool: "pprof", Samples: client.Samples(), Top: client.Top(results.TopFrames), Flame: client.Flame("all", results.FlameMin)}
		}
	}
	for i := range run.Cells {
		if c := &run.Cells[i]; c.Level == "self" && c.Contender == "spring-webflux-fn" {
			c.Profile = &results.Profile{Tool: "jfr", Error: "no JFR recording: the JVM writes it on exit, and this one was killed"}
		}
	}
	return run
}

func TestRenderProfiles(t *testing.T) {
	page := render(t, fixtureProfiled(), []byte("/* chart library */"))
	self := sectionByID(t, page, "level-0")
	if n := strings.Count(self, `data-kind="flame"`); n != 4 {
		t.Errorf("%d flame graphs at level self; want 4 (two contenders, each with the client's)", n)
	}
	if !strings.Contains(self, "spring-webflux-fn</strong>: no profile (jfr): no JFR recording") {
		t.Error("the contender without a profile is not named with why")
	}
	if !strings.Contains(self, "Where the CPU went") || !strings.Contains(self, `class="profile-compare"`) {
		t.Error("no profile section or top-frames comparison")
	}
	if strings.Contains(sectionByID(t, page, "level-1"), "Where the CPU went") {
		t.Error("level lab has no profiles, yet a profile section")
	}
	data := chartDataOf(t, page)
	flames := data.Levels[0].Flames
	if len(flames) != 4 || flames[0].Contender != "vertx" || flames[1].Contender != "vertx · client" {
		t.Fatalf("flames %+v; want vertx, its client, spring-webflux, its client", flames)
	}
	if top := flames[0].Top[0]; top.Name != "sun.nio.ch.SocketDispatcher.write0" || top.Self != 60 || top.Total != 60 {
		t.Errorf("vertx's top frame %+v; want write0 at 60 %% self", top)
	}
	if strings.Contains(page, "<script>alert(1)</script>") {
		t.Error("a frame name reached the page unescaped")
	}
}

func TestChromiumDrawsProfiles(t *testing.T) {
	t.Parallel()
	page := browserCheck(t, "profiled", func(lib, out string) error { return WriteFile(fixtureProfiled(), lib, out) })
	if page.topFrames == 0 {
		t.Error("the top-frames table was not filled")
	}
}
