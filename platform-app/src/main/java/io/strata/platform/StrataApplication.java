package io.strata.platform;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

@SpringBootApplication
@ConfigurationPropertiesScan
public class StrataApplication {
    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals("plan")) { // KV capacity planner: runs without starting Spring
            System.exit(io.strata.platform.planner.PlannerCli.run(java.util.Arrays.copyOfRange(args, 1, args.length), System.out, System.err));
        }
        SpringApplication.run(StrataApplication.class, args);
    }
}
