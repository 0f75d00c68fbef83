package verify

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/arena-lab/arena/internal/postgres"
)

// dbReference is the contract's /db done plainly with pgx's pool, for the db checks' own
// tests, and the faults they must catch.
type dbReference struct {
	url  string
	pool *pgxpool.Pool
	// perRequest: a connection of its own for every request, no pool to bound them.
	perRequest bool
	// missing200: a missing row answers 200 null.
	missing200 bool
}

func (d *dbReference) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/db/")
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	if rest == "slow" {
		ms, ok := strictMS(r.URL.Query().Get("ms"))
		if !ok || ms < 0 || ms > 60000 {
			jsonErr(w, 400, "ms must be an integer in 0..60000")
			return
		}
		if err := d.exec(ctx, "SELECT pg_sleep($1)", float64(ms)/1000); err != nil {
			jsonErr(w, 502, err.Error())
			return
		}
		text(w, "SLEPT")
		return
	}
	id, err := strconv.ParseInt(rest, 10, 32)
	if err != nil || !digitsOnly.MatchString(rest) {
		jsonErr(w, 400, "id must be a 32-bit integer")
		return
	}
	var rec postgres.Record
	err = d.row(ctx, id, &rec)
	switch {
	case errors.Is(err, pgx.ErrNoRows) && d.missing200:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("null"))
	case errors.Is(err, pgx.ErrNoRows):
		jsonErr(w, 404, "no such row")
	case err != nil:
		jsonErr(w, 502, err.Error())
	default:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(rec)
	}
}

const rowQuery = "SELECT id, value, active, props FROM data WHERE id = $1"

func (d *dbReference) row(ctx context.Context, id int64, rec *postgres.Record) error {
	if d.perRequest {
		conn, err := pgx.Connect(ctx, d.url)
		if err != nil {
			return err
		}
		defer func() { _ = conn.Close(context.Background()) }()
		return conn.QueryRow(ctx, rowQuery, id).Scan(&rec.ID, &rec.Value, &rec.Active, &rec.Props)
	}
	return d.pool.QueryRow(ctx, rowQuery, id).Scan(&rec.ID, &rec.Value, &rec.Active, &rec.Props)
}

func (d *dbReference) exec(ctx context.Context, sql string, arg any) error {
	if d.perRequest {
		conn, err := pgx.Connect(ctx, d.url)
		if err != nil {
			return err
		}
		defer func() { _ = conn.Close(context.Background()) }()
		_, err = conn.Exec(ctx, sql, arg)
		return err
	}
	_, err := d.pool.Exec(ctx, sql, arg)
	return err
}

// needDB starts the lab's database, or skips when PostgreSQL is missing (never under CI,
// which installs it).
func needDB(t *testing.T) *postgres.Server {
	t.Helper()
	if _, err := postgres.FindBin(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	db, err := postgres.Start(context.Background(), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Stop() })
	return db
}

// serveDB serves d on /db/ and the reference HTTP contract beside it, with a pool of DBPool
// connections at most, until the test ends.
func serveDB(t *testing.T, db *postgres.Server, d *dbReference) *Server {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(db.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns, cfg.MinConns = DBPool, 0
	if d.pool, err = pgxpool.NewWithConfig(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.pool.Close)
	d.url = db.URL()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ref := &referenceHTTP{self: "http://" + ln.Addr().String()}
	mux := http.NewServeMux()
	mux.Handle("/db/", d)
	mux.Handle("/", ref)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	s := inProcessAt(t, ln.Addr().String())
	// The database is this process's child, its backends come and go with connections:
	// the process checks are not about it (they are tested on their own).
	s.Pid = 0
	return s
}

// The db checks pass against the reference, and end with the database stopped and /db/1
// answered 502 while /instant still answers.
func TestDBChecksPassAgainstTheReference(t *testing.T) {
	db := needDB(t)
	s := serveDB(t, db, &dbReference{})
	checks := DBChecks(context.Background(), s, db)
	if len(checks) < 20 {
		t.Errorf("%d checks: want every /db rule, each bad one followed by its readiness check", len(checks))
	}
	for _, f := range failures(checks) {
		t.Error(f)
	}
	if _, err := db.Connections(context.Background()); err == nil {
		t.Error("the database still answers after the checks: the down case was not tested")
	}
}

// A server that opens a connection per request, unbounded by DB_POOL, fails the pool check;
// one that answers a missing row 200 fails the 404 check. Nothing else fails.
func TestDBChecksCatchAnUnboundedPoolAndAMissingRow(t *testing.T) {
	for _, c := range []struct {
		ref  *dbReference
		want string
	}{
		{&dbReference{perRequest: true}, "the pool holds at most DB_POOL=2"},
		{&dbReference{missing200: true}, "no such row → 404"},
	} {
		db := needDB(t)
		s := serveDB(t, db, c.ref)
		fails := failures(DBChecks(context.Background(), s, db))
		if len(fails) != 1 || !strings.Contains(fails[0], c.want) {
			t.Errorf("%+v: failures %q, want one naming %q", *c.ref, fails, c.want)
		}
	}
}
