package io.strata.platform.console;

import io.strata.platform.config.TestPlatform;
import io.strata.platform.config.PlatformHome;
import io.strata.platform.web.Browser;
import io.strata.platform.web.BrowserTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The console in a real headless Chromium against the real engine loop and the real hybrid KV
 * cache manager: the dashboard follows a load (bucket bars fill, the prefix-cache hit rate rises), a
 * request is aborted from the Requests page, a key is created and revoked, a setting is saved, and every
 * page is photographed into target/screenshots/ with no error in the browser's console.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"strata.api.auth=none", "strata.model.path=no-such-model", "strata.model.on-load-failure=console-only"})
@Import(ConsoleTestEngine.class)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConsoleBrowserTest extends BrowserTest {
    static final PlatformHome HOME = PlatformHome.temp("strata-console-test");
    static final int PREFIX = 512;

    @DynamicPropertySource
    static void platformHome(DynamicPropertyRegistry registry) throws IOException {
        HOME.register(registry);
    }

    @LocalServerPort
    int port;
    @Autowired
    JdbcClient jdbc;
    @Autowired
    io.strata.platform.engine.ServingEngine engine;
    @Autowired
    io.strata.platform.requestlog.RequestLogWriter requestLog;

    final HttpClient http = HttpClient.newHttpClient();

    @AfterEach
    void noConsoleErrors() {
        if (browser != null) {
            assertThat(browser.consoleErrors()).as("errors in the browser console").isEmpty();
        }
    }

    private Browser browser() {
        if (browser == null) {
            browser = new Browser("http://localhost:" + port);
            browser.driver().manage().window().setSize(new Dimension(1400, 2000));
            browser.logIn("admin", TestPlatform.ADMIN_PASSWORD);
            browser.waitFor(By.id("card-kv"));
        }
        return browser;
    }

    private WebDriverWait waiting(int seconds) {
        WebDriverWait wait = new WebDriverWait(browser().driver(), Duration.ofSeconds(seconds), Duration.ofMillis(200));
        // the dashboard re-renders its bucket boxes every second
        wait.ignoring(StaleElementReferenceException.class);
        return wait;
    }

    @Test
    @Order(1)
    void dashboardStreamsLiveStatsWithThreeBuckets() {
        Browser b = browser();
        b.open("/admin");
        waiting(15).until(d -> d.findElement(By.tagName("body")).getAttribute("data-stats-at") != null);
        for (String bucket : List.of("large", "middle", "small")) {
            assertThat(bucketAttribute(bucket, "data-free")).as(bucket + " free pages").isPositive();
            int kinds = waiting(5).until(d -> d.findElements(By.cssSelector("#bucket-" + bucket + " .kv-kinds li")).size());
            assertThat(kinds).as(bucket + " kinds").isPositive();
        }
        assertThat(b.find(By.id("health-engine")).getText()).isEqualTo("SERVING");
        assertThat(b.find(By.id("health-model")).getText()).contains("dsv4-tiny-stable");
        // this fixture's engine runs a scripted model, not a backend: the strip says none serves and what is available
        assertThat(b.find(By.id("health-backend")).getText()).startsWith("none serving (available: cpu: ");
        b.screenshot("console-01-dashboard-idle");
    }

    @Test
    @Order(2)
    void bucketBarsAndHitRateFollowALoad() throws Exception {
        Browser b = browser();
        b.open("/admin");
        waiting(15).until(d -> d.findElement(By.tagName("body")).getAttribute("data-stats-at") != null);
        assertThat(used("large")).isZero();
        String hitBefore = b.find(By.id("prefix-window")).getText();

        // 6 clients, 3 requests each, sharing a 512-token prefix: later requests hit the cached blocks
        int[] prefix = IntStream.range(0, PREFIX).map(i -> 100 + (i * 37) % 800).toArray();
        List<CompletableFuture<Void>> clients = new ArrayList<>();
        for (int c = 0; c < 6; c++) {
            int client = c;
            clients.add(CompletableFuture.runAsync(() -> {
                for (int r = 0; r < 3; r++) {
                    int round = r;
                    int[] prompt = IntStream.concat(IntStream.of(prefix),
                            IntStream.range(0, 100).map(i -> 100 + (client * 131 + round * 17 + i * 7) % 800)).toArray();
                    String body = complete(prompt, 30);
                    assertThat(body).contains("\"finish_reason\":\"length\"");
                }
            }));
        }
        waiting(30).until(d -> used("large") > 0 && used("middle") > 0 && used("small") > 0);
        b.screenshot("console-02-dashboard-under-load");
        CompletableFuture.allOf(clients.toArray(CompletableFuture[]::new)).get();

        try {
            waiting(20).until(d -> percent(d.findElement(By.id("prefix-window")).getText()) > 0
                    && used("large") + used("middle") + used("small") == 0
                    && cached("large") + cached("middle") + cached("small") > 0);
        } catch (RuntimeException e) {
            b.screenshot("console-03-dashboard-after-load-FAILED");
            throw e;
        }
        assertThat(hitBefore).isEqualTo("–");
        assertThat(percent(b.find(By.id("prefix-total")).getText())).isPositive();
        assertThat(percent(b.find(By.id("prefix-share")).getText())).isPositive();
        b.screenshot("console-03-dashboard-after-load");
    }

    @Test
    @Order(3)
    void abortARequestFromTheRequestsPage() throws Exception {
        Browser b = browser();
        b.open("/admin/requests");
        int[] prompt = IntStream.range(0, 77).map(i -> 200 + i).toArray();
        // about the longest the fixture's 2,048-token context allows (76 s of scripted steps), so the clicks below come
        // first even on a loaded host; the abort ends it
        CompletableFuture<String> longRequest = CompletableFuture.supplyAsync(() -> complete(prompt, 1900));

        WebElement abort = waiting(20).until(d -> d.findElements(By.cssSelector("#live-rows button[data-abort]")).stream()
                .findFirst().orElse(null));
        String id = abort.getAttribute("data-abort");
        WebElement row = b.find(By.cssSelector("#live-rows tr[data-request-id='" + id + "']"));
        assertThat(row.getText()).contains("77");
        waiting(10).until(d -> d.findElement(By.cssSelector("#live-rows tr[data-request-id='" + id + "']"))
                .getAttribute("data-phase").equals("decode"));
        b.screenshot("console-04-requests-live");

        b.find(By.id("abort-" + id)).click();
        b.waitForText(By.id("abort-status"), "Abort requested for " + id);
        waiting(10).until(d -> d.findElements(By.cssSelector("#live-rows tr[data-request-id='" + id + "']")).isEmpty());
        assertThat(longRequest.get()).contains("\"finish_reason\":\"abort\"");

        // the request log shows it among the finished ones, and the filter narrows to it
        waiting(10).until(d -> {
            d.navigate().refresh();
            return !d.findElements(By.cssSelector("#finished-table tr[data-request-id='" + id + "']")).isEmpty();
        });
        new Select(b.find(By.id("filter-reason"))).selectByValue("abort");
        b.find(By.id("filter-apply")).click();
        b.waitFor(By.cssSelector("#finished-table tr[data-request-id='" + id + "']"));
        assertThat(b.driver().findElements(By.cssSelector("#finished-table tr[data-reason]")))
                .allSatisfy(tr -> assertThat(tr.getAttribute("data-reason")).isEqualTo("abort"));
        b.screenshot("console-05-requests-finished-abort");
    }

    @Test
    @Order(4)
    void createAndRevokeAnApiKey() {
        Browser b = browser();
        b.open("/admin/keys");
        b.find(By.id("key-name")).sendKeys("console-test");
        b.find(By.id("key-rate")).sendKeys("60");
        b.find(By.id("create-key")).click();
        String secret = b.waitFor(By.id("new-key-secret")).getText();
        assertThat(secret).startsWith("sk-");
        WebElement row = b.find(By.cssSelector("tr[data-key-name='console-test']"));
        assertThat(row.getText()).contains("60/min").contains("active").contains(secret.substring(0, 12));
        // moments read as on the Requests page (UTC, no ISO-8601 internals); a key never used says so
        assertThat(row.findElement(By.className("key-created")).getText())
                .matches("\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2} UTC");
        assertThat(row.findElement(By.className("key-last-used")).getText()).isEqualTo("never");
        b.screenshot("console-06-keys-created");
        // POST-redirect-GET: the secret came on a plain page; reloading it neither creates a second key nor shows the secret again
        assertThat(b.path()).isEqualTo("/admin/keys");
        b.driver().navigate().refresh();
        b.waitFor(By.cssSelector("tr[data-key-name='console-test']"));
        assertThat(b.driver().findElements(By.cssSelector("tr[data-key-name='console-test']"))).hasSize(1);
        assertThat(b.driver().findElements(By.id("new-key-secret"))).isEmpty();
        assertThat(b.driver().getPageSource()).doesNotContain(secret);
        row = b.find(By.cssSelector("tr[data-key-name='console-test']"));

        String rowId = row.getAttribute("id");
        b.find(By.id("revoke-" + rowId.substring("key-".length()))).click();
        b.waitFor(By.id("notice"));
        assertThat(b.find(By.id(rowId)).getAttribute("data-revoked")).isEqualTo("true");
        assertThat(b.find(By.id(rowId)).getText()).contains("revoked");
        assertThat(b.driver().getPageSource()).doesNotContain(secret);
        b.screenshot("console-07-keys-revoked");
    }

    @Test
    @Order(5)
    void changeASettingAndSeeItSaved() {
        Browser b = browser();
        b.open("/admin/settings");
        WebElement queued = b.find(By.id("max-queued-requests"));
        assertThat(queued.getAttribute("value")).isEqualTo("1024");
        queued.clear();
        queued.sendKeys("777");
        b.find(By.id("log-prompts")).click();
        b.find(By.id("settings-save")).click();
        b.waitForText(By.id("notice"), "strata.scheduler.max-queued-requests=777");
        WebElement row = b.find(By.id("setting-max-queued-requests"));
        assertThat(b.find(By.id("max-queued-requests")).getAttribute("value")).isEqualTo("777");
        // applied to the running engine and request log at once, no restart
        assertThat(row.findElement(By.className("running-value")).getText()).isEqualTo("777");
        assertThat(row.findElement(By.className("setting-status")).getText()).contains("saved, applied");
        assertThat(engine.limits().maxQueuedRequests()).isEqualTo(777);
        assertThat(requestLog.logPrompts()).isTrue();
        assertThat(jdbc.sql("SELECT setting_value FROM setting WHERE setting_key = 'strata.scheduler.max-queued-requests'")
                .query(String.class).single()).isEqualTo("777");
        assertThat(jdbc.sql("SELECT setting_value FROM setting WHERE setting_key = 'strata.log-prompts'")
                .query(String.class).single()).isEqualTo("true");
        b.screenshot("console-08-settings-saved");

        // an invalid value is refused with a message naming the setting, and nothing is saved
        WebElement seqs = b.find(By.id("max-num-seqs"));
        ((JavascriptExecutor) b.driver()).executeScript("arguments[0].removeAttribute('min'); arguments[0].value = '0';", seqs);
        b.find(By.id("settings-save")).click();
        b.waitForText(By.id("error"), "strata.scheduler.max-num-seqs");
        assertThat(jdbc.sql("SELECT COUNT(*) FROM setting WHERE setting_key = 'strata.scheduler.max-num-seqs'")
                .query(Long.class).single()).isZero();
    }

    @Test
    @Order(6)
    void modelPageShowsScheduleLayoutAndPlanner() {
        Browser b = browser();
        b.open("/admin/model");
        List<String> kinds = b.driver().findElements(By.cssSelector(".layer-strip .layer")).stream()
                .map(e -> e.getAttribute("data-kind")).toList();
        // dsv4-tiny-stable: compress_ratios [0, 4, 128, 4, 128, 4, 0] (the last is the MTP block)
        assertThat(kinds).containsExactly("window", "c4a", "c128a", "c4a", "c128a", "c4a", "window");
        assertThat(b.find(By.id("kv-kinds")).getText()).contains("c4a_kv").contains("c128a_kv").contains("swa_kv");
        assertThat(b.find(By.id("plan-sequences")).getText()).isNotEmpty();
        // the fixture has no model card; its manifest says its weights are random, and the page says so plainly
        assertThat(b.find(By.id("model-about")).getText()).isEqualTo("What this model is\n"
                + "Test fixture, not a trained model: its weights are random numbers, generated to check the "
                + "serving path, so what it writes is meaningless.");
        assertThat(b.driver().findElements(By.id("about-card"))).isEmpty();
        b.screenshot("console-09-model");

        new Select(b.find(By.id("plan-model"))).selectByValue("flash");
        WebElement ctx = b.find(By.id("plan-context"));
        ctx.clear();
        ctx.sendKeys("1048576");
        WebElement mem = b.find(By.id("plan-memory"));
        mem.clear();
        mem.sendKeys("80");
        WebElement target = b.find(By.id("plan-target"));
        target.clear();
        target.sendKeys("1048576");
        b.find(By.id("plan-submit")).click();
        b.waitFor(By.id("plan-result"));
        assertThat(Long.parseLong(b.find(By.id("plan-sequences")).getText().replace(",", ""))).isPositive();
        assertThat(b.find(By.id("seeds-table")).getText()).contains("83.9 GiB").containsIgnoringCase("Published figure");
        assertThat(b.find(By.tagName("main")).getText()).as("no internal jargon on the page")
                .doesNotContainIgnoringCase("seed");
        assertThat(b.find(By.id("published-source")).getText()).contains("docs/kv-cache.md");
        @SuppressWarnings("unchecked")
        List<Number> labelled = (List<Number>) ((JavascriptExecutor) b.driver()).executeScript(
                "return Chart.getChart(document.getElementById('plan-chart')).scales.y.ticks"
                        + ".filter(t => t.label !== '' && t.label != null).map(t => t.value);");
        assertThat(labelled).as("log-axis labels only at powers of ten, so they cannot overlap").isNotEmpty()
                .allSatisfy(v -> assertThat(Math.abs(Math.log10(v.doubleValue()) - Math.round(Math.log10(v.doubleValue())))).isLessThan(1e-9));
        b.screenshot("console-10-model-planner-flash-1m");
    }

    @Test
    @Order(7)
    void pluginsPageShowsLiveDeviceMemory() {
        Browser b = browser();
        b.open("/admin/plugins");
        WebElement live = waiting(15).until(d -> d.findElements(By.cssSelector(".device-live[data-plugin='cpu'][data-updated]"))
                .stream().findFirst().orElse(null));
        assertThat(live.getText()).contains("used of").contains("JVM heap")
                .as("device properties in words and units, not raw field names").doesNotContainPattern("[a-z][A-Za-z]*Bytes=\\d");
        b.screenshot("console-11-plugins");
    }

    @Test
    @Order(8)
    void finishedRequestsFitTheCardAndArePagedOnTheServer() {
        jdbc.sql("MERGE INTO api_key (name, key_prefix, key_hash) KEY (key_hash) VALUES ('a-team-integration-key', 'sk-abcd1234', 'paging')").update();
        long keyId = jdbc.sql("SELECT id FROM api_key WHERE key_hash = 'paging'").query(Long.class).single();
        java.time.Instant now = java.time.Instant.now();
        for (int i = 0; i < 130; i++) {
            jdbc.sql("""
                    INSERT INTO request_log (id, created_at, api_key_id, endpoint, model, prompt_tokens, cached_tokens,
                        completion_tokens, queue_ms, ttft_ms, total_ms, finish_reason, http_status, error)
                    VALUES (:id, :at, :key, '/v1/chat/completions', 'dsv4-tiny-stable', 123456, 120000, 4096, 12345,
                        234567, 1234567, :reason, :status, :error)""")
                    .param("id", "chatcmpl-" + java.util.UUID.randomUUID().toString().replace("-", ""))
                    .param("at", java.sql.Timestamp.from(now.minusSeconds(600 + i)))
                    .param("key", keyId)
                    .param("reason", i % 2 == 0 ? "length" : "error")
                    .param("status", i % 2 == 0 ? 200 : 500)
                    .param("error", i % 2 == 0 ? null : "backend 'cpu' failed: step execution raised IllegalStateException")
                    .update();
        }
        Browser b = browser();
        b.open("/admin/requests");
        WebElement table = b.waitFor(By.id("finished-table"));
        JavascriptExecutor js = (JavascriptExecutor) b.driver();
        long tableWidth = ((Number) js.executeScript("return arguments[0].getBoundingClientRect().right", table)).longValue();
        long sectionRight = ((Number) js.executeScript(
                "return document.querySelector('main.content').getBoundingClientRect().right", table)).longValue();
        long scroll = ((Number) js.executeScript("return document.documentElement.scrollWidth")).longValue();
        assertThat(tableWidth).as("finished table's right edge inside the page content").isLessThanOrEqualTo(sectionRight);
        assertThat(scroll).as("no horizontal scrolling at 1,400 px").isLessThanOrEqualTo(1400);
        List<WebElement> rows = b.driver().findElements(By.cssSelector("#finished-table tr[data-request-id]"));
        assertThat(rows).hasSize(25);
        assertThat(b.find(By.id("finished-range")).getText()).contains("1–25 of ");
        b.screenshot("console-12-requests-paged");

        // filters survive paging: only 'length' rows, page 2 continues where page 1 ended
        new Select(b.find(By.id("filter-reason"))).selectByValue("length");
        b.find(By.id("filter-apply")).click();
        b.waitFor(By.id("finished-older"));
        List<String> first = b.driver().findElements(By.cssSelector("#finished-table tr[data-request-id]")).stream()
                .map(tr -> tr.getAttribute("data-request-id")).toList();
        b.find(By.id("finished-older")).click();
        b.waitForText(By.id("finished-range"), "26–50 of ");
        List<WebElement> older = b.driver().findElements(By.cssSelector("#finished-table tr[data-request-id]"));
        assertThat(older).hasSize(25).allSatisfy(tr -> assertThat(tr.getAttribute("data-reason")).isEqualTo("length"));
        assertThat(older).noneMatch(tr -> first.contains(tr.getAttribute("data-request-id")));
        assertThat(new Select(b.find(By.id("filter-reason"))).getFirstSelectedOption().getAttribute("value")).isEqualTo("length");
        b.find(By.id("finished-newer")).click();
        b.waitForText(By.id("finished-range"), "1–25 of ");
    }

    private String complete(int[] prompt, int maxTokens) {
        String body = "{\"model\":\"dsv4-tiny-stable\",\"max_tokens\":" + maxTokens + ",\"ignore_eos\":true,\"prompt\":["
                + IntStream.of(prompt).mapToObj(Integer::toString).collect(Collectors.joining(",")) + "]}";
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/v1/completions"))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            return r.body();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private long used(String bucket) {
        return bucketAttribute(bucket, "data-used");
    }

    private long cached(String bucket) {
        return bucketAttribute(bucket, "data-cached");
    }

    private long bucketAttribute(String bucket, String attribute) {
        return waiting(5).until(d -> Long.parseLong(d.findElement(By.id("bucket-" + bucket)).getAttribute(attribute)));
    }

    private static double percent(String text) {
        String t = text.replace("%", "").trim();
        return t.isEmpty() || t.equals("–") ? 0 : Double.parseDouble(t);
    }
}
