package main

// /db (arena's own study): pgx's pgxpool, queried on the request's own goroutine, which blocks
// while it waits for a pooled connection and for PostgreSQL's answer, as Go code does.

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

const dbAcquireTimeout = 30 * time.Second // a pooled connection within this, or a 502

// database is /db's pool, or why there is none (DB_URL unset, a bad DB_URL or DB_POOL): then
// every /db request answers 502 with that reason and nothing else changes.
type database struct {
	pool   *pgxpool.Pool
	reason string
}

// openDatabase makes the pool from DB_URL with at most DB_POOL connections. It does not
// connect: pgxpool.NewWithConfig opens connections when they are acquired (MinConns 0), so the
// server starts, and is ready, with the database down.
func openDatabase(url, size string) *database {
	if url == "" {
		return &database{reason: "DB_URL is not set"}
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		log.Printf("DB_URL: %v; /db answers 502", err)
		return &database{reason: "DB_URL: " + err.Error()}
	}
	if size != "" { // the lab always sets it; unset, pgxpool's default
		n, err := strconv.Atoi(size)
		if err != nil || n < 1 || n > 256 {
			log.Printf("DB_POOL must be an integer in 1..256, got %q; /db answers 502", size)
			return &database{reason: fmt.Sprintf("DB_POOL must be an integer in 1..256, got %q", size)}
		}
		cfg.MaxConns = int32(n)
	}
	cfg.MinConns = 0
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		log.Printf("database pool: %v; /db answers 502", err)
		return &database{reason: "database pool: " + err.Error()}
	}
	log.Printf("database pool: pgxpool, at most %d connections, none opened until /db asks", cfg.MaxConns)
	return &database{pool: pool}
}

// acquire takes a pooled connection, waiting at most dbAcquireTimeout (and no longer than the
// client stays). The query then runs on the request's context alone, so that /db/slow's sleep
// of up to 60 s is not cut at 30 s.
func (d *database) acquire(r *http.Request) (*pgxpool.Conn, error) {
	if d.pool == nil {
		return nil, errors.New(d.reason)
	}
	ctx, cancel := context.WithTimeout(r.Context(), dbAcquireTimeout)
	defer cancel()
	conn, err := d.pool.Acquire(ctx)
	if errors.Is(err, context.DeadlineExceeded) && r.Context().Err() == nil {
		return nil, fmt.Errorf("no pooled connection within %s", dbAcquireTimeout)
	}
	return conn, err
}

// row answers /db/{id}: the row decoded into Data and encoded as /data/{id} encodes it.
func (d *database) row(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 32) // PostgreSQL's integer: signed 32 bits
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("id must be an integer in -2147483648..2147483647, got %q", r.PathValue("id")))
		return
	}
	conn, err := d.acquire(r)
	if err != nil {
		writeError(w, http.StatusBadGateway, "database failed: "+err.Error())
		return
	}
	defer conn.Release()
	var data Data
	err = conn.QueryRow(r.Context(), "SELECT id, value, active, props FROM data WHERE id = $1", int32(id)).
		Scan(&data.ID, &data.Value, &data.Active, &data.Props)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		writeError(w, http.StatusNotFound, fmt.Sprintf("no row %d", id))
	case err != nil:
		writeError(w, http.StatusBadGateway, "database failed: "+err.Error())
	default:
		writeJSON(w, http.StatusOK, data)
	}
}

// slow answers /db/slow?ms=N: pg_sleep holds one pooled connection N ms.
func (d *database) slow(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ms, err := strconv.Atoi(q.Get("ms"))
	if !q.Has("ms") || err != nil || ms < 0 || ms > 60_000 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("ms is required, an integer in 0..60000, got %q", q.Get("ms")))
		return
	}
	conn, err := d.acquire(r)
	if err != nil {
		writeError(w, http.StatusBadGateway, "database failed: "+err.Error())
		return
	}
	defer conn.Release()
	if _, err := conn.Exec(r.Context(), "SELECT pg_sleep($1)", float64(ms)/1000); err != nil {
		writeError(w, http.StatusBadGateway, "database failed: "+err.Error())
		return
	}
	writeText(w, "SLEPT")
}

// close closes the pool's connections (waiting for the ones in use to be given back).
func (d *database) close() {
	if d.pool != nil {
		d.pool.Close()
	}
}
