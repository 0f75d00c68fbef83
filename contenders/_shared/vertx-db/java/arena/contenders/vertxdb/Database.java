package arena.contenders.vertxdb;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.handler.HttpException;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowIterator;
import io.vertx.sqlclient.Tuple;

import arena.contenders.vertxcommon.Data;

/**
 * /db (arena's own study) on Vert.x's reactive PostgreSQL client, the same in both Vert.x
 * contenders, which differ only in who calls it (the HTTP verticle, or a service verticle behind
 * the EventBus). Every verticle instance that calls {@link #create} gets a lease on ONE shared
 * pool ({@code PoolOptions.setShared}, by name), so the server holds at most DB_POOL connections
 * whatever the number of instances. Queries are written to the connection and answered on the
 * calling verticle's event loop; nothing blocks.
 */
public final class Database {

    /** The contract's query, a prepared (parameterised) one. */
    public static final String FIND = "SELECT id, value, active, props FROM data WHERE id = $1";
    /** /db/slow: holds one pooled connection for the given seconds (a double). */
    public static final String SLEEP = "SELECT pg_sleep($1)";
    /** How long a request waits for a pooled connection, and a new connection may take to open. */
    public static final int ACQUIRE_TIMEOUT_S = 30;
    /** The shared pool's name: every instance's lease is on this one pool. */
    static final String POOL_NAME = "arena-db";

    private final Pool pool; // null when DB_URL is unset
    private final String why; // why there is no pool

    private Database(Pool pool, String why) {
        this.pool = pool;
        this.why = why;
    }

    /**
     * The shared pool for this verticle instance, from the {@code db} config that Launch makes of
     * DB_URL and DB_POOL ({@code {"url","pool"}}, absent when DB_URL is unset). The pool opens no
     * connection here: the first query does, so the server starts without the database.
     */
    public static Database create(Vertx vertx, JsonObject db) {
        if (db == null) {
            return new Database(null, "DB_URL is not set");
        }
        // A libpq URI: postgres://user:password@host:port/database.
        PgConnectOptions connect = PgConnectOptions.fromUri(db.getString("url"))
                .setConnectTimeout((int) TimeUnit.SECONDS.toMillis(ACQUIRE_TIMEOUT_S))
                // Parse once per connection, then only bind and execute (the client's own cache).
                .setCachePreparedStatements(true);
        PoolOptions options = new PoolOptions()
                .setMaxSize(db.getInteger("pool", PoolOptions.DEFAULT_MAX_SIZE))
                .setMaxWaitQueueSize(-1) // unbounded: a request waits for a connection...
                .setConnectionTimeout(ACQUIRE_TIMEOUT_S) // ...up to 30 s, then fails
                .setConnectionTimeoutUnit(TimeUnit.SECONDS)
                .setShared(true)
                .setName(POOL_NAME);
        Pool pool = PgBuilder.pool()
                .with(options)
                .connectingTo(connect)
                .using(vertx)
                .build();
        return new Database(pool, null);
    }

    /** Row {@code id} as the record, or an {@link HttpException}: 404 when there is none, 502 when the database fails. */
    public Future<Data> find(int id) {
        if (pool == null) {
            return Future.failedFuture(new HttpException(502, "no database: " + why));
        }
        return pool.preparedQuery(FIND)
                .mapping(Database::data)
                .execute(Tuple.of(id))
                .transform(done -> {
                    if (done.failed()) {
                        return Future.failedFuture(failed(done.cause()));
                    }
                    RowIterator<Data> rows = done.result().iterator();
                    return rows.hasNext()
                            ? Future.succeededFuture(rows.next())
                            : Future.failedFuture(new HttpException(404, "no row with id " + id));
                });
    }

    /** /db/slow: {@code pg_sleep(ms / 1000.0)} on one pooled connection, or a 502 {@link HttpException}. */
    public Future<Void> sleep(long ms) {
        if (pool == null) {
            return Future.failedFuture(new HttpException(502, "no database: " + why));
        }
        return pool.preparedQuery(SLEEP)
                .execute(Tuple.of(ms / 1000.0))
                .transform(done -> done.succeeded()
                        ? Future.<Void>succeededFuture()
                        : Future.failedFuture(failed(done.cause())));
    }

    /** A row decoded into the record /data/{id} encodes (props is text[]). */
    private static Data data(Row row) {
        String[] props = row.getArrayOfStrings(3);
        List<String> list = props == null ? null : Arrays.asList(props);
        return new Data(row.getInteger(0), row.getString(1), row.getBoolean(2), list);
    }

    private static HttpException failed(Throwable e) {
        return new HttpException(502, "database failed: " + describe(e));
    }

    /** A short reason for an error body. */
    private static String describe(Throwable e) {
        String message = e.getMessage();
        return message == null || message.isBlank() ? e.getClass().getSimpleName() : message;
    }
}
