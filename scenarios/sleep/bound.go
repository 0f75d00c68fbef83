package sleep

import (
	"fmt"
	"strconv"
	"time"

	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// tomcatDefaultThreads is Tomcat's default server.tomcat.threads.max, what spring-mvc runs
// with when WORKER_THREADS is unset (contenders/spring-mvc/README.md). The seed states no
// pool size: the study ran the jar with no options (seeds/001 line 14).
const tomcatDefaultThreads = 200

// threadsOf is the request-thread pool a contender ran a level with, from the WORKER_THREADS
// its cells (or else the level) recorded, and whether it was set; Tomcat's default when not.
func threadsOf(run *results.Run, contender, level string) (int, bool) {
	for _, c := range run.Cells {
		if c.Contender == contender && c.Level == level {
			if n, err := strconv.Atoi(c.Env["WORKER_THREADS"]); err == nil {
				return n, true
			}
		}
	}
	for _, l := range run.Scenario.Levels {
		if l.Name == level {
			if n, err := strconv.Atoi(l.Env["WORKER_THREADS"]); err == nil {
				return n, true
			}
		}
	}
	return tomcatDefaultThreads, false
}

// poolBound is the model of a pool of n threads each waiting w per request: it serves at
// most n/w requests/s, so c connections in a closed loop wait about c/(n/w), and never less
// than w.
func poolBound(n, c int, w time.Duration) (perS, waitMs float64) {
	perS = float64(n) / w.Seconds()
	return perS, max(float64(w)/float64(time.Millisecond), float64(c)/perS*1000)
}

// tomcatDiffers says why Tomcat's mean at conns is where it is, from the pool the run
// recorded and the sleep, and whether the study's own figure can follow from its setup.
func tomcatDiffers(conns int, theirsMs float64) func(*results.Run, float64) string {
	return func(run *results.Run, ours float64) string {
		t := tests[0]
		n, set := threadsOf(run, "spring-mvc", levelName(t, conns))
		src := fmt.Sprintf("WORKER_THREADS=%d", n)
		if !set {
			src = "WORKER_THREADS unset: Tomcat's default server.tomcat.threads.max, arena's choice; the seed states none"
		}
		perS, modelMs := poolBound(n, conns, t.wait)
		why := fmt.Sprintf("a pool of %d threads (%s) waiting %s each serves at most %d / %s = %.0f requests/s, so %d connections wait ≈ %d / %.0f/s = %s; ours %s",
			n, src, results.FormatMs(waitMs(t)), n, results.FormatMs(waitMs(t)), perS, conns, conns, perS, results.FormatMs(modelMs), results.FormatMs(ours))
		// the least pool that gives the study's figure by the same model
		if need := float64(conns) * waitMs(t) / theirsMs; need > float64(tomcatDefaultThreads) {
			why += fmt.Sprintf(". The study's %s at %d connections needs ≥ %.0f threads by the same model: it cannot follow from Tomcat's default %d, and its setup (seeds/001 lines 12–17) states no other",
				results.FormatMs(theirsMs), conns, need, tomcatDefaultThreads)
		}
		return why
	}
}

// nettyDiffers: an event loop holds no thread while a request waits, so every connection
// waits the sleep alone until its core is busy.
func nettyDiffers(conns int) func(*results.Run, float64) string {
	return func(run *results.Run, ours float64) string {
		return fmt.Sprintf("an event loop holds no thread while a request waits: %d connections each wait ≈ %s until the server's core is busy; ours %s",
			conns, results.FormatMs(waitMs(tests[0])), results.FormatMs(ours))
	}
}

// cpuDiffers sets a server's CPU beside the study's, per request, from the cores and the
// requests/s the run recorded: a core's CPU is at most 100 %, the study's cpu=N/3200 is N %
// of one of its 32 cores, and a closed loop of c connections each waiting m serves c/m
// requests/s (Little's law), so the study's figure costs N % / (c/m) a request.
func cpuDiffers(contender string, conns int, theirsPct, theirsMs float64) func(*results.Run, float64) string {
	return func(run *results.Run, ours float64) string {
		cores := scenario.CountCPUs(run.Env.ServerCPUs)
		t := tests[0]
		ts, ok := scenario.Index(run).Tag(contender, levelName(t, conns), t.tag)
		if cores == 0 || !ok || ts.RPS.Median <= 0 {
			return ""
		}
		theirsRPS := float64(conns) / (theirsMs / 1000)
		return fmt.Sprintf("the study's cpu=%.0f/3200 is %.0f %% of one core, of its %d (seeds/001 line 17), at %d connections / %s = %.0f requests/s: %.2f ms of CPU a request; "+
			"here %d server core(s), at most %d %%, at %.0f requests/s: %.2f ms a request",
			theirsPct, theirsPct, studyCores, conns, results.FormatMs(theirsMs), theirsRPS, theirsPct/100/theirsRPS*1000,
			cores, cores*100, ts.RPS.Median, ours/100/ts.RPS.Median*1000)
	}
}
