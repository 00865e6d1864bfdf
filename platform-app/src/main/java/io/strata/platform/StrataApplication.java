package io.strata.platform;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

@SpringBootApplication
@ConfigurationPropertiesScan
public class StrataApplication {
    public static void main(String[] args) {
        SpringApplication.run(StrataApplication.class, args);
    }
}
