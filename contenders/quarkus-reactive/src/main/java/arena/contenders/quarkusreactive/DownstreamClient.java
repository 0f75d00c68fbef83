package arena.contenders.quarkusreactive;

import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import org.eclipse.microprofile.rest.client.inject.RegisterRestClient;

import arena.contenders.quarkuscommon.Data;
import io.smallrye.mutiny.Uni;

/**
 * The downstream of /data/{id} (configuration key {@code downstream}: DOWNSTREAM_URL, or the
 * server itself), as Quarkus' REST client: returning Uni, the call is non-blocking, made from
 * the event loop and completed there.
 */
@RegisterRestClient(configKey = "downstream")
@Path("/resources")
public interface DownstreamClient {

    @GET
    @Path("/data{id}.json")
    @Produces(MediaType.APPLICATION_JSON)
    Uni<Data> data(@PathParam("id") int id);
}
