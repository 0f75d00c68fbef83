package lab

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/downstream"
	"github.com/arena-lab/arena/internal/verify"
)

// readyTimeout bounds a contender's start-up: a JVM on one pinned core takes seconds.
const readyTimeout = 120 * time.Second

// Verify checks a built contender against the contract in two starts: first with no
// DOWNSTREAM_URL (so /data/{id} calls the contender itself, the contract's default), then
// against the lab's downstream and its failures. Each start's exit on SIGTERM is checked.
func (l *Lab) Verify(ctx context.Context, m *contender.Manifest, logDir string) verify.Report {
	rep := verify.Report{Contender: m.Name}
	ds, err := downstream.Start("127.0.0.1:0", 0)
	if err != nil {
		rep.Checks = append(rep.Checks, verify.Check{Name: "lab downstream", Detail: err.Error()})
		return rep
	}
	defer ds.Close()
	phases := []struct {
		name   string
		vars   map[string]string
		checks func(base string) []verify.Check
	}{
		{"self", nil, func(base string) []verify.Check {
			checks := verify.SelfChecks(ctx, base)
			if m.Has("chat") {
				checks = append(checks, verify.ChatChecks(ctx, strings.TrimPrefix(base, "http://"), base)...)
			}
			if m.Has("stream") {
				checks = append(checks, verify.StreamChecks(ctx, strings.TrimPrefix(base, "http://"), base)...)
			}
			return checks
		}},
		{"downstream", map[string]string{"DOWNSTREAM_URL": ds.URL()}, func(base string) []verify.Check {
			return verify.DownstreamChecks(ctx, base, ds)
		}},
	}
	for _, ph := range phases {
		in, err := contender.Start(m, contender.StartOptions{
			Settings: l.Settings, CPUs: FormatCPUs(l.ServerCPUs), Vars: ph.vars,
			LogPath: filepath.Join(logDir, fmt.Sprintf("verify-%s-%s.log", m.Name, ph.name)),
		})
		if err != nil {
			rep.Checks = append(rep.Checks, verify.Check{Name: "start (" + ph.name + ")", Detail: err.Error()})
			return rep
		}
		if err := in.WaitReady(ctx, readyTimeout); err != nil {
			in.Stop()
			rep.Checks = append(rep.Checks, verify.Check{Name: "ready (" + ph.name + ")", Detail: fmt.Sprintf("%v; last output:\n%s", err, tail(in.Tail(), 10))})
			return rep
		}
		rep.Checks = append(rep.Checks, verify.Check{Name: "ready (" + ph.name + ")", OK: true})
		rep.Checks = append(rep.Checks, ph.checks("http://"+in.Addr())...)
		rep.Checks = append(rep.Checks, stopCheck(in, ph.name))
		if ctx.Err() != nil {
			return rep
		}
	}
	return rep
}

// stopCheck stops the instance with a slow request pending (a graceful shutdown that
// waits for it would overrun) and checks it exited on SIGTERM within the grace period.
func stopCheck(in *contender.Instance, phase string) verify.Check {
	go func() {
		c := &httpClient{timeout: 30 * time.Second}
		c.get("http://" + in.Addr() + "/delayed?ms=30000")
	}()
	time.Sleep(200 * time.Millisecond)
	took, killed := in.Stop()
	c := verify.Check{Name: "exits within 10 s of SIGTERM (" + phase + ")", OK: !killed, Took: took}
	if killed {
		c.Detail = fmt.Sprintf("still running %s after SIGTERM: killed", contender.StopGrace)
	}
	return c
}

// verifiedStamp remembers that a build passed verify: the same build need not be proven
// again until its sources change (or --reverify).
func (l *Lab) verifiedStamp(m *contender.Manifest, hash string) string {
	return filepath.Join(l.Root, ".arena", "verified", m.Name+"-"+hash+".json")
}

// VerifyCached verifies unless this build already passed.
func (l *Lab) VerifyCached(ctx context.Context, m *contender.Manifest, hash, logDir string, again bool) (verify.Report, bool, error) {
	stamp := l.verifiedStamp(m, hash)
	if !again {
		if raw, err := os.ReadFile(stamp); err == nil {
			var rep verify.Report
			if json.Unmarshal(raw, &rep) == nil && rep.Passed() {
				return rep, true, nil
			}
		}
	}
	rep := l.Verify(ctx, m, logDir)
	if ctx.Err() != nil {
		return rep, false, ctx.Err()
	}
	if rep.Passed() {
		_ = os.MkdirAll(filepath.Dir(stamp), 0o755)
		raw, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(stamp, raw, 0o644); err != nil {
			return rep, false, err
		}
	}
	return rep, false, nil
}

func tail(lines []string, n int) string {
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	out := ""
	for _, l := range lines {
		out += "    " + l + "\n"
	}
	return out
}
