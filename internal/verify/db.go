package verify

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/arena-lab/arena/internal/downstream"
	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/postgres"
)

// Database is what the db checks need of the lab's database: how many connections the
// contender holds to it (the asker's own excepted), and stopping it.
type Database interface {
	Connections(ctx context.Context) (int, error)
	Stop() error
}

var _ Database = (*postgres.Server)(nil)

// DBPool is the DB_POOL verify gives: small, so that two slow queries hold the whole pool.
const DBPool = 2

// dbChecks need the lab's database as DB_URL, holding postgres.Rows rows.
func dbChecks() []request {
	absent := postgres.Rows + 1
	return []request{
		{name: "/db/1", path: "/db/1", status: 200, ctype: appJSON, body: load.SameJSON(downstream.Data1)},
		{name: "/db/2", path: "/db/2", status: 200, ctype: appJSON, body: load.SameJSON(downstream.Data2)},
		{name: "/db/4321", path: "/db/4321", status: 200, ctype: appJSON, body: load.SameJSON(postgres.JSON(4321))},
		bad(fmt.Sprintf("/db/%d: no such row → 404", absent), "/db/"+strconv.Itoa(absent), 404),
		bad("/db/abc → 400", "/db/abc", 400),
		bad("/db/1.5 → 400", "/db/1.5", 400),
		bad("/db/99999999999: beyond 32 bits → 400", "/db/99999999999", 400),
		{name: "/db/slow?ms=300 holds a connection 300 ms", path: "/db/slow?ms=300", status: 200, ctype: textPlain, body: exactly("SLEPT"),
			minTook: 290 * time.Millisecond, maxTook: 3 * time.Second},
		bad("/db/slow → 400: ms is required", "/db/slow", 400),
		bad("/db/slow?ms=abc → 400", "/db/slow?ms=abc", 400),
		bad("/db/slow?ms=-1 → 400", "/db/slow?ms=-1", 400),
		bad("/db/slow?ms=60001 → 400", "/db/slow?ms=60001", 400),
	}
}

// DBChecks runs the /db checks against the lab's database db (DB_POOL = DBPool), then the
// pool's bound, and ends with the database gone: /db answers 502 and the rest still answers.
func DBChecks(ctx context.Context, s *Server, db Database) []Check {
	out := runGroup(ctx, s, GroupDB, dbChecks())
	out = append(out, poolCheck(ctx, s, db))
	_ = db.Stop()
	return append(out, runGroup(ctx, s, GroupDB, []request{
		{name: "/db/1: the database is down → 502", path: "/db/1", status: 502, ctype: appJSON, body: errorBody, bad: true,
			maxTook: 10 * time.Second, deadline: 15 * time.Second},
		{name: "/instant while the database is down", path: "/instant", status: 200, ctype: textPlain, body: exactly("INSTANT"), maxTook: time.Second},
	})...)
}

// runGroup is runList with the checks in group.
func runGroup(ctx context.Context, s *Server, group string, list []request) []Check {
	out := runList(ctx, s, list)
	for i := range out {
		out[i].Group = group
	}
	return out
}

// poolHold is how long the pool check's slow queries hold the pool.
const poolHold = 2 * time.Second

// poolCheck holds the whole pool with DBPool slow queries, then asks for a row: it must wait
// for a connection, not open another, and the database must never see more than DBPool of
// the contender's connections.
func poolCheck(ctx context.Context, s *Server, db Database) Check {
	c := Check{Group: GroupDB, Name: fmt.Sprintf("the pool holds at most DB_POOL=%d connections; a request waits for one", DBPool)}
	start := time.Now()
	var wg sync.WaitGroup
	slow := make([]Check, DBPool)
	for i := range slow {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slow[i] = request{name: "hold", path: fmt.Sprintf("/db/slow?ms=%d", poolHold.Milliseconds()), status: 200, body: exactly("SLEPT")}.run(ctx, s.Base())
		}()
	}
	most, sampleErr := 0, error(nil)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for time.Since(start) < poolHold+time.Second && ctx.Err() == nil {
			n, err := db.Connections(ctx)
			if err != nil {
				sampleErr = err
				return
			}
			most = max(most, n)
			time.Sleep(100 * time.Millisecond)
		}
	}()
	time.Sleep(poolHold / 4)
	row := request{name: "row", path: "/db/2", status: 200, ctype: appJSON, body: load.SameJSON(downstream.Data2), deadline: 20 * time.Second}.run(ctx, s.Base())
	wg.Wait()
	<-sampled
	c.Took = time.Since(start)
	waited := row.Took
	switch {
	case sampleErr != nil:
		c.Detail = "counting the database's connections: " + sampleErr.Error()
	case failedOf(slow) != "":
		c.Detail = "a slow query failed: " + failedOf(slow)
	case !row.OK:
		c.Detail = "/db/2 while the pool was held: " + row.Detail
	case most > DBPool:
		c.Detail = fmt.Sprintf("the database saw %d of the contender's connections at once, more than DB_POOL=%d", most, DBPool)
	case waited < poolHold/2:
		c.Detail = fmt.Sprintf("/db/2 answered in %s while both pooled connections were held %s: it did not wait for one", waited.Round(time.Millisecond), poolHold)
	default:
		c.OK = true
		c.Detail = fmt.Sprintf("at most %d connections; /db/2 waited %s", most, waited.Round(time.Millisecond))
	}
	return c
}

// failedOf is the first failed check's detail, or "".
func failedOf(checks []Check) string {
	for _, c := range checks {
		if !c.OK {
			return c.Detail
		}
	}
	return ""
}
