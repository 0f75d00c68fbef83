package arena.contender;

import org.apache.coyote.AbstractProtocol;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.web.embedded.tomcat.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.stereotype.Component;

/**
 * Sizes Tomcat's request-thread pool from WORKER_THREADS (study 004 used 11); unset keeps
 * Tomcat's default of 200. Done here rather than with server.tomcat.threads.max because
 * Tomcat's min-spare default (10) above max-threads makes the pool fail to start. Shared by the
 * Spring MVC contenders with a Tomcat request pool (spring-mvc, spring-mvc-async,
 * spring-mvc-async-all); spring-mvc-jetty sizes Jetty's pool instead, and spring-mvc-virtual has
 * no pool to size.
 */
@Component
class WorkerThreads implements WebServerFactoryCustomizer<TomcatServletWebServerFactory> {

    private final Integer workerThreads;

    WorkerThreads(@Value("${WORKER_THREADS:#{null}}") Integer workerThreads) {
        this.workerThreads = workerThreads;
    }

    @Override
    public void customize(TomcatServletWebServerFactory factory) {
        if (workerThreads == null) {
            return;
        }
        if (workerThreads < 1) {
            throw new IllegalArgumentException("WORKER_THREADS must be at least 1, got " + workerThreads);
        }
        // Runs after Boot's own connector customizer, so these values win.
        factory.addConnectorCustomizers(connector -> {
            if (connector.getProtocolHandler() instanceof AbstractProtocol<?> protocol) {
                protocol.setMaxThreads(workerThreads);
                protocol.setMinSpareThreads(Math.min(10, workerThreads));
            }
        });
    }
}
