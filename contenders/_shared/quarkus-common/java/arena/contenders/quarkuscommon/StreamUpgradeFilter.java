package arena.contenders.quarkuscommon;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

import io.quarkus.vertx.http.runtime.filters.Filters;
import io.vertx.core.http.HttpHeaders;

/**
 * A bad {@code rate} or {@code size} on /stream is refused with 400 and the JSON error before
 * any upgrade. WebSockets Next rejects an upgrade only with a bare status
 * ({@code HttpUpgradeCheck}), so this is a Vert.x route filter, Quarkus' documented hook that
 * runs before every route; it looks at /stream only and passes everything else on.
 */
@Singleton
public class StreamUpgradeFilter {

    void register(@Observes Filters filters) {
        filters.register(rc -> {
            if (!"/stream".equals(rc.normalizedPath())) {
                rc.next();
                return;
            }
            try {
                StreamParams.parse(rc.request().query());
            } catch (ApiError e) {
                rc.response().setStatusCode(e.status())
                        .putHeader(HttpHeaders.CONTENT_TYPE, "application/json")
                        .end(Json.error(e.getMessage()));
                return;
            }
            rc.next();
        }, 100);
    }
}
