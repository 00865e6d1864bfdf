package io.strata.platform.web;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Base of the console's browser tests: one headless Chromium per test class, opened lazily by the
 * subclass (it knows the server port and how far to log in) and closed after the class. A missing
 * Chromium fails the test rather than skipping it: the browser tests are part of the suite.
 */
@ExtendWith(ThreadDumpOnFailure.class)
public abstract class BrowserTest {
    protected static Browser browser;

    @BeforeAll
    static void checkBrowser() {
        assertThat(Browser.installed())
                .as("chromium and chromium-driver must be installed (apt-get install -y chromium chromium-driver)")
                .isTrue();
    }

    @AfterAll
    static void closeBrowser() {
        if (browser != null) {
            browser.close();
            browser = null;
        }
    }
}
