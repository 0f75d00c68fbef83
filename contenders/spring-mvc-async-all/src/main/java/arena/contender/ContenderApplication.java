package arena.contender;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.scheduling.annotation.EnableScheduling;

// @EnableScheduling only so that Boot auto-configures its TaskScheduler, the timer that completes
// /delayed and /sleep; the application has no @Scheduled methods.
@EnableScheduling
@SpringBootApplication
public class ContenderApplication {

    public static void main(String[] args) {
        SpringApplication.run(ContenderApplication.class, args);
    }
}
