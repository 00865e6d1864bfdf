package io.strata.platform.admin;

import io.strata.platform.config.PlatformHome;
import io.strata.platform.config.TestPlatform;
import io.strata.platform.plugins.PluginHost;
import io.strata.platform.plugins.PluginJars;
import io.strata.platform.web.Browser;
import io.strata.platform.web.BrowserTest;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The console in a real headless Chromium: login, the dashboard, the Plugins page with both built
 * plugins, disable/enable, and installing a plugin by uploading its jar through the page.
 * Screenshots go to platform-app/target/screenshots/.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class AdminConsoleBrowserTest extends BrowserTest {
    static final PlatformHome HOME = PlatformHome.temp("strata-console-");

    @DynamicPropertySource
    static void platformHome(DynamicPropertyRegistry registry) throws IOException {
        HOME.register(registry);
        registry.add("strata.plugins.max-upload-size", () -> "1MB");
    }

    @LocalServerPort
    int port;
    @Autowired
    PluginHost host;
    @Autowired
    org.springframework.jdbc.core.simple.JdbcClient jdbc;

    private Browser browser() {
        if (browser == null) {
            browser = new Browser("http://localhost:" + port);
        }
        return browser;
    }

    @Test
    void wrongPasswordIsRejectedAndTheRightOneOpensTheDashboard() {
        Browser b = browser();
        b.driver().manage().deleteAllCookies();
        b.open("/admin");
        assertThat(b.path()).isEqualTo("/login");

        b.logIn("admin", "not-the-password");
        b.waitFor(By.id("login-error"));
        assertThat(b.path()).startsWith("/login");
        b.screenshot("01-login-rejected");

        b.logIn("admin", TestPlatform.ADMIN_PASSWORD);
        b.waitFor(By.id("card-backends"));
        assertThat(b.path()).isIn("/admin", "/");
        for (String card : new String[]{"health-strip", "card-kv", "card-prefix-cache", "card-load", "card-latency"}) {
            assertThat(b.find(By.id(card)).isDisplayed()).as(card).isTrue();
        }
        b.waitForText(By.id("health-status"), "UP");
        b.screenshot("02-dashboard");
    }

    @Test
    void theSignInPageShowsAMessageOnlyWhenThereIsSomethingToSay() {
        Browser b = browser();
        b.driver().manage().deleteAllCookies();
        b.open("/login");
        b.waitFor(By.id("login-form"));
        String firstVisit = b.find(By.tagName("main")).getText();
        assertThat(firstVisit).doesNotContain("Wrong user name or password").doesNotContain("signed out");
        assertThat(b.driver().findElements(By.cssSelector(".alert"))).isEmpty();

        b.logIn("admin", "not-the-password");
        b.waitFor(By.id("login-error"));
        assertThat(b.find(By.tagName("main")).getText()).contains("Wrong user name or password.").doesNotContain("signed out");

        b.logIn("admin", TestPlatform.ADMIN_PASSWORD);
        b.waitFor(By.id("card-backends"));
        b.find(By.cssSelector("form.signout button")).click();
        b.waitFor(By.id("login-logout"));
        assertThat(b.find(By.tagName("main")).getText()).contains("You are signed out.").doesNotContain("Wrong user name");
        b.screenshot("00-signed-out");
    }

    @Test
    void dashboardSaysWhichBackendServesAndWhatEachHitRateMeans() {
        // a minute the previous run of the server stored, with prefix-cache hits
        java.time.Instant minute = java.time.Instant.now().minusSeconds(300).truncatedTo(java.time.temporal.ChronoUnit.MINUTES);
        jdbc.sql("""
                MERGE INTO console_minute_stats (minute_start, samples, requests_per_s, prompt_tokens_per_s, gen_tokens_per_s,
                    running_avg, waiting_avg, preemptions, aborted, prefix_queries, prefix_hits, hit_rate_window,
                    large_used_avg, large_cached_avg, middle_used_avg, middle_cached_avg, small_used_avg, small_cached_avg)
                KEY (minute_start) VALUES (:m, 60, 1, 100, 10, 1, 0, 0, 0, 1000, 900, 0.9, 0, 0, 0, 0, 0, 0)""")
                .param("m", java.sql.Timestamp.from(minute)).update();
        Browser b = loggedIn();
        b.open("/admin");
        new org.openqa.selenium.support.ui.WebDriverWait(b.driver(), java.time.Duration.ofSeconds(30))
                .until(d -> d.findElement(By.tagName("body")).getAttribute("data-stats-at") != null);

        assertThat(b.find(By.id("backends-headline")).getText()).isEqualTo("The model is served by the cpu backend.");
        assertThat(b.find(By.id("backend-cpu")).getAttribute("data-status")).isEqualTo("serving");
        assertThat(b.find(By.id("backend-cpu")).getText()).contains("serves the model");
        if (host.availableBackends().stream().noneMatch(x -> x.pluginId().equals("cuda"))) {
            assertThat(b.find(By.id("backend-cuda")).getText()).contains("cannot serve on this host").contains("CUDA unavailable:");
        }
        assertThat(b.find(By.id("card-backends")).getText()).doesNotContain("plugins started");

        // the serving backend, its device and the KV pools its allocateKv returned
        assertThat(b.find(By.id("serving-backend")).getText())
                .isEqualTo("Serving backend: cpu — CPU (Java Vector API) on host memory");
        assertThat(b.find(By.id("health-backend")).getText()).as("the health strip names the serving backend and device")
                .isEqualTo("cpu on host memory");
        assertPoolsTable(b);

        // no request since this start: the since-start figures say so instead of showing 0 %
        assertThat(b.find(By.id("prefix-total")).getText()).isEqualTo("–");
        assertThat(b.find(By.id("prefix-share")).getText()).isEqualTo("–");
        List<String> hints = List.of(b.find(By.id("prefix-window-hint")).getText(), b.find(By.id("prefix-total-hint")).getText(),
                b.find(By.id("prefix-share-hint")).getText());
        assertThat(hints).doesNotHaveDuplicates().allSatisfy(h -> assertThat(h).isNotBlank());
        assertThat(hints.get(0)).contains("last 1,000");
        assertThat(hints.get(1)).contains("since this server started");
        assertThat(hints.get(2)).contains("cached_tokens");

        // the stored minute is on the dashed hit-rate line, and the line never drops to a made-up 0
        @SuppressWarnings("unchecked")
        List<Object> line = (List<Object>) ((org.openqa.selenium.JavascriptExecutor) b.driver()).executeScript(
                "return Chart.getChart(document.getElementById('prefix-chart')).data.datasets[1].data.map(p => p.y);");
        assertThat(line).contains(0.9).doesNotContain(0L, 0.0);
        b.screenshot("02b-dashboard-backends-and-hit-rates");
    }

    /** One row per page bucket of the served model, each with pages and allocated bytes, and their total. */
    private static void assertPoolsTable(Browser b) {
        List<WebElement> rows = b.find(By.id("serving-pools")).findElements(By.cssSelector("tbody tr"));
        assertThat(rows).isNotEmpty();
        for (WebElement row : rows) {
            List<WebElement> cells = row.findElements(By.tagName("td"));
            assertThat(cells.get(0).getText()).isIn("large", "middle", "small");
            assertThat(Long.parseLong(cells.get(1).getText().replace(",", ""))).isPositive();
            assertThat(cells.get(2).getText()).matches("[0-9.]+ (B|KiB|MiB|GiB)");
        }
        assertThat(b.find(By.cssSelector("#serving-pools tfoot")).getText()).startsWith("all pools").matches(".*[0-9.]+ (KiB|MiB|GiB)");
        assertThat(b.driver().findElements(By.id("serving-memory"))).as("no device memory on the CPU backend").isEmpty();
    }

    @Test
    void pluginsPageShowsBothPluginsAndCanDisableAndEnable() {
        Browser b = loggedIn();
        b.open("/admin/plugins");
        WebElement cpu = b.waitFor(By.id("plugin-cpu"));
        WebElement cuda = b.find(By.id("plugin-cuda"));
        assertThat(cpu.findElement(By.className("plugin-state")).getText()).isEqualTo("STARTED");
        assertThat(cpu.findElement(By.className("probe")).getText()).contains("available");
        assertThat(cpu.findElement(By.className("devices")).getText()).contains("cores");
        assertThat(cuda.findElement(By.className("plugin-state")).getText()).isEqualTo("STARTED");
        if (!host.availableBackends().stream().anyMatch(x -> x.pluginId().equals("cuda"))) {
            assertThat(cuda.findElement(By.className("probe")).getText()).contains("unavailable").contains("CUDA unavailable:");
        }
        assertThat(b.find(By.id("card-serving")).getText()).contains("Serving backend: cpu — CPU (Java Vector API) on host memory");
        assertPoolsTable(b);
        b.screenshot("03-plugins");

        try {
            b.find(By.id("disable-cuda")).click();
            b.waitFor(By.id("notice"));
            assertThat(b.find(By.id("plugin-cuda")).findElement(By.className("plugin-state")).getText()).isEqualTo("DISABLED");
            assertThat(host.plugin("cuda").orElseThrow().state()).isEqualTo("DISABLED");
            b.screenshot("04-plugin-disabled");

            b.find(By.id("enable-cuda")).click();
            b.waitFor(By.id("notice"));
            assertThat(b.find(By.id("plugin-cuda")).findElement(By.className("plugin-state")).getText()).isEqualTo("STARTED");
        } finally {
            // the choice is stored: a browser that stalls in between must not leave cuda disabled for the other tests
            if (host.plugin("cuda").orElseThrow().disabled()) {
                host.enable("cuda");
            }
        }
    }

    @Test
    void uploadingAPluginJarThroughThePageInstallsIt() throws IOException {
        Path jar = PluginJars.workingPlugin(Files.createTempDirectory("upload-").resolve("acme-backend.jar"), "acme", "Acme X1");
        Browser b = loggedIn();
        b.open("/admin/plugins");
        b.waitFor(By.id("upload-file")).sendKeys(jar.toString());
        b.find(By.id("upload-submit")).click();
        b.waitFor(By.id("notice"));
        assertThat(b.find(By.id("notice")).getText()).contains("Installed plugin acme");
        WebElement acme = b.find(By.id("plugin-acme"));
        assertThat(acme.findElement(By.className("plugin-state")).getText()).isEqualTo("STARTED");
        assertThat(acme.findElement(By.className("devices")).getText()).contains("Acme X1");
        assertThat(Files.exists(HOME.resolve("plugins/acme-2.0.0.jar"))).isTrue();
        b.screenshot("05-plugin-uploaded");

        // the same id again is refused, and so is a jar that is not a plugin
        b.find(By.id("upload-file")).sendKeys(jar.toString());
        b.find(By.id("upload-submit")).click();
        b.waitFor(By.id("error"));
        assertThat(b.find(By.id("error")).getText()).contains("already installed");

        Path notPlugin = PluginJars.notAPluginJar(Files.createTempDirectory("upload-").resolve("library.jar"));
        b.find(By.id("upload-file")).sendKeys(notPlugin.toString());
        b.find(By.id("upload-submit")).click();
        b.waitFor(By.id("error"));
        assertThat(b.find(By.id("error")).getText()).contains("no plugin.properties");
        assertThat(Files.exists(HOME.resolve("plugins/library.jar"))).isFalse();
        b.screenshot("06-upload-rejected");
    }

    @Test
    void aJarWithAMissingPluginClassSaysWhichClassIsMissing() throws IOException {
        Path ghost = PluginJars.pluginWithMissingPluginClass(Files.createTempDirectory("upload-").resolve("ghost.jar"), "ghost");
        Browser b = loggedIn();
        b.open("/admin/plugins");
        b.waitFor(By.id("upload-file")).sendKeys(ghost.toString());
        b.find(By.id("upload-submit")).click();
        b.waitFor(By.id("error"));
        assertThat(b.find(By.id("error")).getText()).contains("test.ghost.MissingPlugin").doesNotContain("NullPointerException")
                .doesNotContain("getPlugin()");
        assertThat(b.driver().findElements(By.id("plugin-ghost"))).isEmpty();
        b.screenshot("07-upload-missing-class");
    }

    @Test
    void aFailedOrDisabledPluginCanBeRemovedAfterConfirming() throws IOException {
        Path failing = PluginJars.pluginWhoseProbeThrows(Files.createTempDirectory("upload-").resolve("failing.jar"), "failing");
        Path spare = PluginJars.workingPlugin(Files.createTempDirectory("upload-").resolve("spare.jar"), "spare", "Spare X1");
        Browser b = loggedIn();
        b.open("/admin/plugins");
        for (Path jar : List.of(failing, spare)) {
            b.waitFor(By.id("upload-file")).sendKeys(jar.toString());
            b.find(By.id("upload-submit")).click();
            b.waitFor(By.cssSelector("#notice, #error"));
        }
        assertThat(b.find(By.id("plugin-failing")).findElement(By.className("plugin-state")).getText()).isEqualTo("FAILED");
        assertThat(b.driver().findElements(By.id("remove-spare"))).as("a started plugin has no Remove").isEmpty();
        assertThat(Files.exists(HOME.resolve("plugins/failing-1.0.0.jar"))).isTrue();

        // dismissing the confirmation keeps it
        b.find(By.id("remove-failing")).click();
        assertThat(b.driver().switchTo().alert().getText()).contains("Remove failing?").contains("failing-1.0.0.jar");
        b.driver().switchTo().alert().dismiss();
        assertThat(b.find(By.id("plugin-failing")).isDisplayed()).isTrue();

        b.find(By.id("remove-failing")).click();
        b.driver().switchTo().alert().accept();
        b.waitForText(By.id("notice"), "Plugin failing removed");
        assertThat(b.driver().findElements(By.id("plugin-failing"))).isEmpty();
        assertThat(Files.exists(HOME.resolve("plugins/failing-1.0.0.jar"))).isFalse();
        assertThat(host.plugin("failing")).isEmpty();
        b.screenshot("08-plugin-removed");

        b.find(By.id("disable-spare")).click();
        b.waitFor(By.id("remove-spare")).click();
        b.driver().switchTo().alert().accept();
        b.waitForText(By.id("notice"), "Plugin spare removed");
        assertThat(Files.exists(HOME.resolve("plugins/spare-2.0.0.jar"))).isFalse();
        assertThat(host.plugin("spare")).isEmpty();
        assertThat(jdbc.sql("SELECT COUNT(*) FROM plugin_state WHERE plugin_id = 'spare'").query(Long.class).single())
                .as("a removed plugin's disable choice is forgotten").isZero();
    }

    @Test
    @org.junit.jupiter.api.extension.ExtendWith(org.springframework.boot.test.system.OutputCaptureExtension.class)
    void anUploadOverTheSizeLimitIsRefused(org.springframework.boot.test.system.CapturedOutput output) throws IOException {
        Path big = Files.createTempDirectory("upload-").resolve("huge.jar");
        Files.write(big, new byte[2 * 1024 * 1024]);
        Browser b = loggedIn();
        b.open("/admin/plugins");
        b.waitFor(By.id("upload-file")).sendKeys(big.toString());
        b.find(By.id("upload-submit")).click();
        b.waitFor(By.id("error"));
        assertThat(b.find(By.id("error")).getText()).contains("larger than 1 MB");
        // a user's mistake, not the server's: one line in the log, no ERROR with a stack trace
        assertThat(output.getAll()).contains("Plugin upload refused").doesNotContain("onErrorDropped")
                .doesNotContain("DataBufferLimitException");
    }

    private Browser loggedIn() {
        Browser b = browser();
        b.open("/admin");
        if (b.path().startsWith("/login")) {
            b.logIn("admin", TestPlatform.ADMIN_PASSWORD);
            b.waitFor(By.id("card-backends"));
        }
        return b;
    }
}
