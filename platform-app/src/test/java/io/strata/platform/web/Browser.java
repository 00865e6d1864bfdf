package io.strata.platform.web;

import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;

/**
 * A real headless Chromium driven by Selenium. The driver and browser paths are given explicitly
 * so Selenium Manager never tries to download anything.
 */
public final class Browser implements AutoCloseable {
    private static final String CHROMIUM = "/usr/bin/chromium";
    private static final String CHROMEDRIVER = "/usr/bin/chromedriver";

    private final WebDriver driver;
    private final String baseUrl;

    public Browser(String baseUrl) {
        this.baseUrl = baseUrl;
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM);
        options.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-quic", "--no-first-run", "--window-size=1400,1000",
                // a loaded 2-core CI box starves a background renderer; keep it scheduled like a visible one
                "--disable-renderer-backgrounding", "--disable-background-timer-throttling",
                "--disable-backgrounding-occluded-windows");
        // the tests wait for the elements they need; waiting for every subresource only adds stalls
        options.setPageLoadStrategy(org.openqa.selenium.PageLoadStrategy.EAGER);
        // keep the page's console messages so tests can assert that a page logged no errors
        options.setCapability("goog:loggingPrefs", java.util.Map.of("browser", "ALL"));
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(new File(CHROMEDRIVER)).usingAnyFreePort().build();
        this.driver = new ChromeDriver(service, options);
        // well below Selenium's 3-minute command timeout, well above a page load on a busy 2-core host
        driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(90));
    }

    public static boolean installed() {
        return Files.isExecutable(Path.of(CHROMIUM)) && Files.isExecutable(Path.of(CHROMEDRIVER));
    }

    public Browser open(String path) {
        driver.get(baseUrl + path);
        return this;
    }

    public WebDriver driver() {
        return driver;
    }

    public String path() {
        return driver.getCurrentUrl().substring(baseUrl.length());
    }

    public WebElement find(By by) {
        return driver.findElement(by);
    }

    public WebElement waitFor(By by) {
        return new WebDriverWait(driver, Duration.ofSeconds(45)).until(ExpectedConditions.visibilityOfElementLocated(by));
    }

    public void waitForText(By by, String text) {
        new WebDriverWait(driver, Duration.ofSeconds(45)).until(ExpectedConditions.textToBePresentInElementLocated(by, text));
    }

    public void logIn(String user, String password) {
        open("/login");
        find(By.id("username")).sendKeys(user);
        find(By.id("password")).sendKeys(password);
        find(By.id("login-submit")).click();
    }

    /** Saves a screenshot under target/screenshots (system property strata.test.screenshots.dir). */
    public Path screenshot(String name) {
        Path dir = Path.of(System.getProperty("strata.test.screenshots.dir", "target/screenshots"));
        try {
            Files.createDirectories(dir);
            Path file = dir.resolve(name + ".png");
            File shot = ((TakesScreenshot) driver).getScreenshotAs(OutputType.FILE);
            Files.copy(shot.toPath(), file, StandardCopyOption.REPLACE_EXISTING);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Console messages of level SEVERE (script errors, failed loads, CSP violations) since the last call. */
    public java.util.List<String> consoleErrors() {
        return driver.manage().logs().get(org.openqa.selenium.logging.LogType.BROWSER).getAll().stream()
                .filter(e -> e.getLevel().intValue() >= java.util.logging.Level.SEVERE.intValue())
                .map(org.openqa.selenium.logging.LogEntry::getMessage).toList();
    }

    @Override
    public void close() {
        driver.quit();
    }
}
