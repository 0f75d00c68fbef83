package arena.contender;

import java.util.Map;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

@SpringBootApplication
public class ContenderApplication {

    public static void main(String[] args) {
        SpringApplication app = new SpringApplication(ContenderApplication.class);
        app.setDefaultProperties(workerThreads(System.getenv("WORKER_THREADS")));
        app.run(args);
    }

    /**
     * WORKER_THREADS as Boot's own Jetty pool settings (study 004 used 11); unset keeps Jetty's
     * default of 200. Jetty's pool refuses to start with max threads below min threads (Boot's
     * default min is 8), so a smaller pool lowers min to match. Default properties rank lowest:
     * anything set explicitly (e.g. --server.jetty.threads.max) still wins.
     */
    static Map<String, Object> workerThreads(String raw) {
        if (raw == null || raw.isBlank()) {
            return Map.of();
        }
        int threads = Integer.parseInt(raw.trim());
        if (threads < 1) {
            throw new IllegalArgumentException("WORKER_THREADS must be at least 1, got " + threads);
        }
        return Map.of("server.jetty.threads.max", threads,
                "server.jetty.threads.min", Math.min(8, threads));
    }
}
