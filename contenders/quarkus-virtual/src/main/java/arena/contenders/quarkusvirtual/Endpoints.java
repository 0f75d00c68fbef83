package arena.contenders.quarkusvirtual;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Arrays;

import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import org.eclipse.microprofile.rest.client.inject.RestClient;

import arena.contenders.quarkuscommon.ApiError;
import arena.contenders.quarkuscommon.Data;
import arena.contenders.quarkuscommon.Database;
import arena.contenders.quarkuscommon.Downstream;
import arena.contenders.quarkuscommon.Json;
import arena.contenders.quarkuscommon.Params;
import arena.contenders.quarkuscommon.StreamStats;
import io.agroal.api.AgroalDataSource;
import io.smallrye.common.annotation.RunOnVirtualThread;
import io.vertx.core.http.HttpServerRequest;

/**
 * The contract's HTTP paths, as blocking code on virtual threads: {@code @RunOnVirtualThread}
 * on the class runs every method on a new virtual thread, which unmounts from its carrier
 * while it waits. /delayed and /sleep call Thread.sleep, /data/{id} the blocking REST client,
 * /db JDBC on the Agroal pool.
 */
@Path("/")
@Produces(MediaType.TEXT_PLAIN)
@RunOnVirtualThread
public class Endpoints {

    @Inject
    @RestClient
    DownstreamClient downstream;

    @Inject
    AgroalDataSource dataSource;

    @Inject
    StreamStats stats;

    @GET
    @Path("actuator/health/liveness")
    @Produces(MediaType.APPLICATION_JSON)
    public String liveness() {
        return Json.UP;
    }

    @GET
    @Path("actuator/health/readiness")
    @Produces(MediaType.APPLICATION_JSON)
    public String readiness() {
        return Json.UP;
    }

    @GET
    @Path("instant")
    public String instant() {
        return "INSTANT";
    }

    @GET
    @Path("delayed")
    public String delayed(HttpServerRequest request) {
        sleepFor(Params.millis(Params.ms(request), 10_000));
        return "DELAYED";
    }

    @GET
    @Path("sleep")
    public String sleep(HttpServerRequest request) {
        sleepFor(Params.millis(Params.ms(request), 100));
        return "SLEPT";
    }

    @GET
    @Path("data/{id}")
    @Produces(MediaType.APPLICATION_JSON)
    public Data data(@PathParam("id") String id) {
        int n = Params.id(id);
        try {
            return downstream.data(n);
        } catch (RuntimeException e) {
            throw Downstream.failure(e);
        }
    }

    @GET
    @Path("db/{id}")
    @Produces(MediaType.APPLICATION_JSON)
    public Data db(@PathParam("id") String raw) {
        int id = Params.id(raw);
        Database.requireUrl();
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(Database.ROW_JDBC)) {
            ps.setInt(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw Database.noRow(id);
                }
                String[] props = (String[]) rs.getArray(4).getArray();
                return new Data(rs.getInt(1), rs.getString(2), rs.getBoolean(3), Arrays.asList(props));
            }
        } catch (SQLException e) {
            throw Database.failure(e);
        }
    }

    @GET
    @Path("db/slow")
    public String dbSlow(HttpServerRequest request) {
        long ms = Params.requiredMillis(Params.ms(request));
        Database.requireUrl();
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(Database.SLEEP_JDBC)) {
            ps.setDouble(1, Database.seconds(ms));
            ps.executeQuery().close();
            return "SLEPT";
        } catch (SQLException e) {
            throw Database.failure(e);
        }
    }

    @GET
    @Path("stream/stats")
    @Produces(MediaType.APPLICATION_JSON)
    public String streamStats() {
        return stats.json();
    }

    private static void sleepFor(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ApiError(503, "interrupted while waiting");
        }
    }
}
