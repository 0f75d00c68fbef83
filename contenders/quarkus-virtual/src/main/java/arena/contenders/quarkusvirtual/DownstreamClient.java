package arena.contenders.quarkusvirtual;

import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import org.eclipse.microprofile.rest.client.inject.RegisterRestClient;

import arena.contenders.quarkuscommon.Data;

/**
 * The downstream of /data/{id} (configuration key {@code downstream}: DOWNSTREAM_URL, or the
 * server itself), as Quarkus' REST client: returning the record itself, the call blocks the
 * calling thread, here the request's virtual thread, which unmounts while it waits.
 */
@RegisterRestClient(configKey = "downstream")
@Path("/resources")
public interface DownstreamClient {

    @GET
    @Path("/data{id}.json")
    @Produces(MediaType.APPLICATION_JSON)
    Data data(@PathParam("id") int id);
}
