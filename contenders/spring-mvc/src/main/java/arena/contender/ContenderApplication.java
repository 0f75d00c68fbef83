package arena.contender;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

@SpringBootApplication
public class ContenderApplication {

    public static void main(String[] args) {
        SpringApplication.run(ContenderApplication.class, args);
    }
}
