package lab

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/downstream"
	"github.com/arena-lab/arena/internal/postgres"
	"github.com/arena-lab/arena/internal/scenario"
	"github.com/arena-lab/arena/internal/verify"
)

// readyTimeout bounds a contender's start-up: a JVM on one pinned core takes seconds.
const readyTimeout = 120 * time.Second

// VerifyGroups are the groups of checks a contender gets when features are asked for: http
// always, and each feature of the contract it implements.
func VerifyGroups(m *contender.Manifest, features []string) []string {
	groups := []string{verify.GroupHTTP}
	for _, g := range verify.Groups[1:] {
		if m.Has(g) && slices.Contains(features, g) {
			groups = append(groups, g)
		}
	}
	return groups
}

// features are the contract's features the levels' loads need.
func features(levels []scenario.Level) []string {
	var out []string
	for _, lv := range levels {
		if f := lv.Feature(); f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// A verifyStart is one start of the contender under verify, with the contract variables it
// gets and the sections of checks run against it, each in its group.
type verifyStart struct {
	name     string
	log      string // the log file's part of the name
	vars     map[string]string
	sections []verifySection
}

type verifySection struct {
	group  string
	checks func(ctx context.Context, s *verify.Server) []verify.Check
	needs  string // a contract variable the checks are about: run only when the start gave it
}

// verifyBindAddress is the BIND_ADDRESS verify gives a contender that honours it: every
// 127/8 address is local on Linux, so the checks reach it there, and 127.0.0.1 must not answer.
const verifyBindAddress = "127.0.0.2"

// verifyStarts are verify's starts. The first has the contract's defaults: no
// DOWNSTREAM_URL (so /data/{id} calls the contender itself) and back-pressure on; a contender
// that honours BIND_ADDRESS gets verifyBindAddress there, so that every check of that start
// (its self-calls included) goes to that address, with no start of its own. The second has
// the lab's downstream, with its failures, and BACKPRESSURE=off, which the stream scenario
// measures: one start for both, as neither check needs the other's default; it keeps the
// contract's 127.0.0.1. With the lab's database db (a contender with the db feature), a
// third start has it as DB_URL with a pool of verify.DBPool, and ends by stopping it.
func verifyStarts(ds *downstream.Server, db *postgres.Server) []verifyStart {
	listeners := func(_ context.Context, s *verify.Server) []verify.Check { return []verify.Check{s.ListenersCheck()} }
	bind := func(ctx context.Context, s *verify.Server) []verify.Check { return []verify.Check{s.BindCheck(ctx)} }
	starts := []verifyStart{
		{name: "defaults", log: "self", vars: map[string]string{contender.BindAddress: verifyBindAddress}, sections: []verifySection{
			{group: verify.GroupHTTP, checks: bind, needs: contender.BindAddress},
			{group: verify.GroupHTTP, checks: verify.SelfChecks},
			{group: verify.GroupHTTP, checks: listeners},
			{group: verify.GroupChat, checks: verify.ChatChecks},
			{group: verify.GroupStream, checks: verify.StreamChecks},
		}},
		{name: "lab downstream, BACKPRESSURE=off", log: "downstream", vars: map[string]string{"DOWNSTREAM_URL": ds.URL(), "BACKPRESSURE": "off"}, sections: []verifySection{
			{group: verify.GroupHTTP, checks: listeners},
			{group: verify.GroupHTTP, checks: func(ctx context.Context, s *verify.Server) []verify.Check { return verify.DownstreamChecks(ctx, s, ds) }},
			{group: verify.GroupStream, checks: verify.StreamChecksUnbounded},
		}},
	}
	if db != nil {
		starts = append(starts, verifyStart{name: fmt.Sprintf("lab database, %s=%d", contender.DBPool, verify.DBPool), log: "db",
			vars: map[string]string{contender.DBURL: db.URL(), contender.DBPool: strconv.Itoa(verify.DBPool)},
			sections: []verifySection{
				{group: verify.GroupDB, checks: func(ctx context.Context, s *verify.Server) []verify.Check { return verify.DBChecks(ctx, s, db) }},
			}})
	}
	return starts
}

// varsFor is the start's contract variables that m honours (the lab passes no other), and the
// start's name for its checks, which says where it was bound when that is not 127.0.0.1.
func (st verifyStart) varsFor(m *contender.Manifest) (vars map[string]string, name string) {
	vars = map[string]string{}
	for k, v := range st.vars {
		if m.Honours(k) || m.Has(verify.GroupDB) && (k == contender.DBURL || k == contender.DBPool) {
			vars[k] = v
		}
	}
	name = st.name
	if b := vars[contender.BindAddress]; b != "" {
		name += ", " + contender.BindAddress + "=" + b
	}
	return vars, name
}

// runs says whether the section runs in a start with vars, for the groups asked.
func (sec verifySection) runs(vars map[string]string, groups []string) bool {
	return slices.Contains(groups, sec.group) && (sec.needs == "" || vars[sec.needs] != "")
}

// Verify checks a built contender against the contract's groups (see VerifyGroups) in its
// starts (see verifyStarts), showing its progress section by section. Each start's exit on
// SIGTERM is checked.
func (l *Lab) Verify(ctx context.Context, m *contender.Manifest, logDir string, groups []string) verify.Report {
	rep := verify.Report{Contender: m.Name}
	fail := func(name, detail string) verify.Report {
		rep.Checks = append(rep.Checks, verify.Check{Group: verify.GroupHTTP, Name: name, Detail: detail})
		return rep
	}
	ds, err := downstream.Start("127.0.0.1:0", 0)
	if err != nil {
		return fail("lab downstream", err.Error())
	}
	defer ds.Close()
	var db *postgres.Server
	if m.Has(verify.GroupDB) && slices.Contains(groups, verify.GroupDB) {
		if db, err = postgres.Start(ctx, postgres.Options{CPUs: FormatCPUs(l.ClientCPUs)}); err != nil {
			rep.Checks = append(rep.Checks, verify.Check{Group: verify.GroupDB, Name: "lab database", Detail: err.Error()})
			groups = slices.DeleteFunc(slices.Clone(groups), func(g string) bool { return g == verify.GroupDB })
		}
		defer func() { _ = db.Stop() }() // the db checks stop it first: Stop twice is once
	}
	began := time.Now()
	l.Progress.verifyLine("verify %s (%s)", m.Name, strings.Join(groups, ", "))
	for _, st := range verifyStarts(ds, db) {
		vars, name := st.varsFor(m)
		at := time.Now()
		in, err := l.StartContender(m, 0, vars, filepath.Join(logDir, fmt.Sprintf("verify-%s-%s.log", m.Name, st.log)), nil)
		if err != nil {
			return fail("start ("+name+")", err.Error())
		}
		if err := in.WaitReady(ctx, readyTimeout); err != nil {
			hint := elsewhere(in)
			in.Stop()
			return fail("ready ("+name+")", fmt.Sprintf("%v%s; last output:\n%s", err, hint, tail(in.Tail(), 10)))
		}
		srv, err := verify.NewServer(in.Addr(), in.Pid())
		if err != nil {
			in.Stop()
			return fail("ready ("+name+")", err.Error())
		}
		rep.Checks = append(rep.Checks, verify.Check{Group: verify.GroupHTTP, Name: "ready (" + name + ")", OK: true, Took: time.Since(at)})
		l.Progress.verifyLine("  start (%s): ready in %s", name, time.Since(at).Round(100*time.Millisecond))
		for _, sec := range st.sections {
			if !sec.runs(vars, groups) || ctx.Err() != nil {
				continue
			}
			at := time.Now()
			checks := sec.checks(ctx, srv)
			rep.Checks = append(rep.Checks, checks...)
			part := verify.Report{Checks: checks}
			l.Progress.verifyLine("  %s (%s)", part.Tally(sec.group), time.Since(at).Round(100*time.Millisecond))
		}
		rep.Checks = append(rep.Checks, stopCheck(in, name))
		if ctx.Err() != nil {
			return rep
		}
	}
	l.Progress.verifyLine("verify %s: %s (%s)", m.Name, rep.Summary(), time.Since(began).Round(time.Second))
	return rep
}

// verifyLine prints a line of verify's progress: verify is minutes of a first run.
func (p *Progress) verifyLine(format string, args ...any) {
	if p != nil && p.w != nil {
		fmt.Fprintf(p.w, "  "+format+"\n", args...)
	}
}

// elsewhere says, for a contender not ready on the BIND_ADDRESS it was given, that it answers
// on the contract's 127.0.0.1 instead: it lists BIND_ADDRESS in knobs but ignores it.
func elsewhere(in *contender.Instance) string {
	if in.Host() == verify.ContractHost {
		return ""
	}
	c := &httpClient{timeout: time.Second}
	addr := net.JoinHostPort(verify.ContractHost, strconv.Itoa(in.Port))
	if _, err := c.get("http://" + addr + contender.ReadinessPath); err != nil {
		return ""
	}
	return fmt.Sprintf(" (it answers on %s: %s=%s is not honoured)", addr, contender.BindAddress, in.Host())
}

// stopCheck stops the instance with a slow request pending (a graceful shutdown that
// waits for it would overrun) and checks it exited on SIGTERM within the grace period.
func stopCheck(in *contender.Instance, phase string) verify.Check {
	go func() {
		c := &httpClient{timeout: 30 * time.Second}
		_, _ = c.get("http://" + in.Addr() + "/delayed?ms=30000") // it only holds the server busy
	}()
	time.Sleep(200 * time.Millisecond)
	took, killed := in.Stop()
	c := verify.Check{Group: verify.GroupHTTP, Name: "exits within 10 s of SIGTERM (" + phase + ")", OK: !killed, Took: took}
	if killed {
		c.Detail = fmt.Sprintf("still running %s after SIGTERM: killed", contender.StopGrace)
	}
	return c
}

// verifiedStamp is where a build's verify report is kept: keyed on the build, the start
// command and the check list's version, so that a new start command or a new check verifies
// the build again.
func (l *Lab) verifiedStamp(m *contender.Manifest, hash string) string {
	return filepath.Join(l.Root, ".arena", "verified", m.Name+"-"+stampKey(hash, m.Start, verify.Version)+".json")
}

func stampKey(hash, start string, version int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "build=%s\nstart=%s\nverify=%d\n", hash, start, version))
	return hex.EncodeToString(sum[:8])
}

// VerifyCached verifies the groups unless this build's kept report already passed them (or
// again is set); a finished report is kept whatever its outcome, as it tells which groups
// passed. cached says the report is the kept one.
func (l *Lab) VerifyCached(ctx context.Context, m *contender.Manifest, hash, logDir string, again bool, groups []string) (rep verify.Report, cached bool, err error) {
	stamp := l.verifiedStamp(m, hash)
	if !again {
		if raw, err := os.ReadFile(stamp); err == nil {
			var kept verify.Report
			if json.Unmarshal(raw, &kept) == nil && kept.PassedGroups(groups...) {
				l.Progress.verifyLine("verify %s: this build passed earlier: %s", m.Name, kept.Summary())
				return kept, true, nil
			}
		}
	}
	rep = l.Verify(ctx, m, logDir, groups)
	if ctx.Err() != nil {
		return rep, false, ctx.Err()
	}
	if err := os.MkdirAll(filepath.Dir(stamp), 0o755); err != nil {
		return rep, false, err
	}
	raw, _ := json.MarshalIndent(rep, "", "  ")
	return rep, false, os.WriteFile(stamp, raw, 0o644)
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
