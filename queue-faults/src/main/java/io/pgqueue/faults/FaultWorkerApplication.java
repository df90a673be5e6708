package io.pgqueue.faults;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A worker node for the fault scenarios: the starter with one task, {@link RecordTask}, whose
 * handler records every execution in a file of the node's own.
 * The scenarios start several of these as processes and kill, stop, pause and starve them.
 */
@SpringBootApplication
public class FaultWorkerApplication {

    /**
     * Starts a node.
     * @param args Spring Boot arguments, e.g. {@code --spring.datasource.url=...}
     */
    public static void main(String[] args) {
        SpringApplication.run(FaultWorkerApplication.class, args);
    }
}
