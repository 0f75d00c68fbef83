package postgres

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/downstream"
)

// Rows 1 and 2 are study 002's documents byte for byte; the rest are made from their id,
// the same every time, and every id of as many digits and the same parity encodes to as many
// bytes (the load's length check reads one length per path).
func TestRecordsAreTheStudysAndStable(t *testing.T) {
	if !bytes.Equal(JSON(1), downstream.Data1) || !bytes.Equal(JSON(2), downstream.Data2) {
		t.Errorf("rows 1 and 2: %s %s, want the study's", JSON(1), JSON(2))
	}
	if !bytes.Equal(JSON(4321), JSON(4321)) || bytes.Equal(JSON(4321), JSON(4322)) {
		t.Error("rows are not a function of their id")
	}
	// Even rows are inactive, odd ones active ("false" is a byte longer than "true").
	for _, id := range []int{1000, 1002, 5556, 9998} {
		if len(JSON(id)) != len(JSON(1234)) {
			t.Errorf("row %d encodes to %d bytes, row 1234 to %d", id, len(JSON(id)), len(JSON(1234)))
		}
	}
	for _, id := range []int{1001, 5555, 9999} {
		if len(JSON(id)) != len(JSON(1235)) {
			t.Errorf("row %d encodes to %d bytes, row 1235 to %d", id, len(JSON(id)), len(JSON(1235)))
		}
	}
	var script strings.Builder
	if err := writeScript(&script, 3); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(script.String(), "1\tone\tt\t{yxc,xcv,xcv}\n2\ttwo\tf\t{qwe,wer,ert}\n3\tv0000003\tt\t") || !strings.HasSuffix(script.String(), "\\.\nANALYZE data;\n") {
		t.Errorf("script:\n%s", script.String())
	}
}

// need starts nothing when PostgreSQL is missing, except under CI, which installs it.
func need(t *testing.T) {
	t.Helper()
	if _, err := FindBin(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// clusters are the lab's cluster folders in the temporary folder.
func clusters(t *testing.T) map[string]bool {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(os.TempDir(), "arena-postgres-*"))
	out := map[string]bool{}
	for _, p := range paths {
		out[p] = true
	}
	return out
}

func noNewCluster(t *testing.T, before map[string]bool) {
	t.Helper()
	for p := range clusters(t) {
		if !before[p] {
			t.Errorf("%s is left behind", p)
		}
	}
}

// A started cluster holds the data set, answers only the arena role's password, runs with
// the settings it reports, and leaves no process, folder or port behind when stopped.
func TestStartLoadsTheDataSetAndLeavesNothing(t *testing.T) {
	need(t)
	before := clusters(t)
	ctx := context.Background()
	s, err := Start(ctx, Options{Rows: 2000, CPUs: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Stop() }()
	if !strings.HasPrefix(s.Version, "PostgreSQL 1") || s.Settings["fsync"] != "off" || s.Settings["max_connections"] != "200" {
		t.Errorf("version %q, settings %v", s.Version, s.Settings)
	}
	for q, want := range map[string]string{
		"SELECT count(*) FROM data": "2000",
		"SELECT row_to_json(d) FROM (SELECT id, value, active, props FROM data WHERE id = 1) d":    string(JSON(1)),
		"SELECT row_to_json(d) FROM (SELECT id, value, active, props FROM data WHERE id = 1999) d": string(JSON(1999)),
		"SHOW fsync":            "off",
		"SHOW max_connections":  "200",
		"SHOW listen_addresses": "127.0.0.1",
	} {
		if got, err := s.Query(ctx, Database, q); err != nil || got != want {
			t.Errorf("%s: %q (%v), want %q", q, got, err, want)
		}
	}
	if !strings.Contains(s.URL(), "arena:"+s.Password+"@127.0.0.1:"+strconv.Itoa(s.Port)+"/arena") || !strings.HasPrefix(s.URL(), "postgres://") {
		t.Errorf("URL %s", s.URL())
	}
	wrong := *s
	wrong.Password = strings.Repeat("0", len(s.Password))
	if _, err := wrong.Query(ctx, Database, "SELECT 1"); err == nil || !strings.Contains(err.Error(), "password authentication failed") {
		t.Errorf("a wrong password: %v", err)
	}
	pid, port, dir := s.Pid(), s.Port, s.dir
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the postmaster %d is still there: %v", pid, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is left: %v", dir, err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Errorf("port %d is still held: %v", port, err)
	} else {
		ln.Close()
	}
	if err := s.Stop(); err != nil {
		t.Errorf("a second Stop: %v", err)
	}
	noNewCluster(t, before)
}

// A port in use, bad options or a start cut short are clear errors that leave nothing.
func TestStartFailuresLeaveNothing(t *testing.T) {
	need(t)
	before := clusters(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := ln.Addr().(*net.TCPAddr).Port
	if _, err := Start(context.Background(), Options{Port: busy}); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("port %d in use: %v", busy, err)
	}
	if _, err := Start(context.Background(), Options{Rows: MaxRows + 1}); err == nil || !strings.Contains(err.Error(), "rows") {
		t.Errorf("too many rows: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Start(ctx, Options{}); err == nil {
		t.Error("a start cut short succeeded")
	}
	noNewCluster(t, before)
}

// A start sweeps the folders of clusters whose lab died (old, no live postmaster), and
// keeps one in use or being made.
func TestSweepRemovesOnlyDeadClusters(t *testing.T) {
	cluster := func(pid string, age time.Duration) string {
		d, err := os.MkdirTemp("", "arena-postgres-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		if pid != "" {
			if err := os.MkdirAll(filepath.Join(d, "data"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, "data", "postmaster.pid"), []byte(pid+"\n/x\n"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		old := time.Now().Add(-age)
		if err := os.Chtimes(d, old, old); err != nil {
			t.Fatal(err)
		}
		return d
	}
	dead := cluster("999999999", 2*time.Hour)
	orphan := cluster("", 2*time.Hour)
	live := cluster(strconv.Itoa(os.Getpid()), 2*time.Hour)
	fresh := cluster("", time.Minute)
	sweep(time.Now())
	for d, kept := range map[string]bool{dead: false, orphan: false, live: true, fresh: true} {
		if _, err := os.Stat(d); (err == nil) != kept {
			t.Errorf("%s: kept %v, want %v", d, err == nil, kept)
		}
	}
}
