package main

import (
	"testing"
	"time"
)

// Study 004's starvation asked in Python (issue 24): Flask on gunicorn's gthread worker with
// the study's 11 request threads starves /instant and the probes behind /delayed, while
// FastAPI's one asyncio loop keeps them fast. Wide margins: verdicts and an order of
// magnitude, never a speed.
func TestIsolationStarvesTheSyncPythonServerOnly(t *testing.T) {
	e2e(t)
	out := t.TempDir()
	log, code := arena(t, 10*time.Minute, "run", "isolation", "--contenders", "python-flask,python-fastapi",
		"--quick", "--duration", "12s", "--timeout", "12s", "--out", out)
	if code != 0 {
		t.Fatalf("arena run exited %d:\n%s", code, log)
	}
	run := loadOnlyRun(t, out)
	verdict := map[string]string{}
	for _, v := range run.Verdicts {
		verdict[v.Contender] = v.Verdict
	}
	if verdict["python-flask"] != "starved" || verdict["python-fastapi"] != "isolated" {
		t.Fatalf("verdicts %v; want python-flask starved, python-fastapi isolated\n%s", verdict, log)
	}
	for _, c := range run.Cells {
		if c.Contender == "python-flask" && c.Env["WORKER_THREADS"] != "11" {
			t.Errorf("python-flask ran with env %v; want the study's WORKER_THREADS=11", c.Env)
		}
	}
	p99 := map[string]float64{}
	for _, s := range run.Summary {
		for _, tag := range s.Tags {
			if tag.Tag == "instant" {
				p99[s.Contender] = tag.Merged.P99
			}
		}
	}
	if p99["python-flask"] < 10*p99["python-fastapi"] {
		t.Fatalf("/instant p99: python-flask %.1f ms, python-fastapi %.1f ms; want ≥ 10×", p99["python-flask"], p99["python-fastapi"])
	}
}
