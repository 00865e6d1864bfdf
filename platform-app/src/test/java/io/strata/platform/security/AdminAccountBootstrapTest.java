package io.strata.platform.security;

import io.strata.platform.config.TestPlatform;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.security.crypto.password.PasswordEncoder;

import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** Without a configured password the first start generates one, prints it once and stores only its hash. */
@ExtendWith(OutputCaptureExtension.class)
class AdminAccountBootstrapTest {
    private static final Pattern PRINTED = Pattern.compile("password: (\\S+)");

    @TempDir
    Path home;

    @Test
    void aGeneratedPasswordIsPrintedOnceAndWorks(CapturedOutput output) throws Exception {
        try (TestPlatform platform = TestPlatform.in(home).withoutInitialPassword()) {
            platform.start();
            Matcher printed = PRINTED.matcher(output.getAll());
            assertThat(printed.find()).as("generated password in the log").isTrue();
            String password = printed.group(1);
            assertThat(password).hasSizeGreaterThanOrEqualTo(20);

            String hash = platform.bean(AdminUserRepository.class).find("admin").orElseThrow().passwordHash();
            assertThat(hash).doesNotContain(password);
            assertThat(platform.bean(PasswordEncoder.class).matches(password, hash)).isTrue();

            int before = output.getAll().length();
            platform.restart();
            assertThat(output.getAll().substring(before)).doesNotContain("Strata console account created");
            assertThat(platform.bean(AdminUserRepository.class).find("admin").orElseThrow().passwordHash()).isEqualTo(hash);
        }
    }
}
