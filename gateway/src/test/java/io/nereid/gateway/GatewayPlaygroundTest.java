package io.nereid.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.nereid.engine.backend.ForwardingBackend;
import io.nereid.engine.backend.Step;
import io.nereid.engine.backend.StepOutput;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The chat playground at {@code /} in headless Chromium driven by Selenium (Debian's chromium and
 * chromium-driver; skipped when they are missing): streamed text grows in the page before the
 * request ends, Stop cancels the request on the server (its metrics count the disconnect), a reload
 * restores the conversation, markup in a message renders as text, and with an API key the page works
 * once the key is entered while the API refuses without it. Screenshots go to {@code target/}.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class GatewayPlaygroundTest {

    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path DRIVER = Path.of("/usr/bin/chromedriver");
    private static TestServer server;
    private static WebDriver browser;

    /** 15 ms per forward pass: a reply streams for seconds, long enough to watch and to stop. */
    static final class Slow extends ForwardingBackend {
        Slow(io.nereid.engine.backend.Backend real) {
            super(real);
        }

        @Override
        public StepOutput forward(Step step) {
            try {
                Thread.sleep(15);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return super.forward(step);
        }
    }

    @BeforeAll
    static void start() throws Exception {
        assumeTrue(Files.isExecutable(CHROMIUM) && Files.isExecutable(DRIVER),
                "needs Debian's chromium and chromium-driver (.ci/run installs them)");
        server = TestServer.withBackend(Slow::new, "--served-model-name", "stories", "--chat-template", "chatml",
                "--tool-call-parser", "hermes", "--threads", "1", "--max-num-seqs", "4");
        browser = chromium();
    }

    static WebDriver chromium() {
        ChromeOptions o = new ChromeOptions().setBinary(CHROMIUM.toFile());
        o.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1200,900", "--no-first-run", "--disable-extensions");
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(DRIVER.toFile())
                .usingAnyFreePort().build();
        return new ChromeDriver(service, o);
    }

    @AfterAll
    static void stop() {
        if (browser != null) {
            browser.quit();
        }
        if (server != null) {
            server.close();
        }
    }

    private static WebDriverWait waiting(WebDriver b) {
        return new WebDriverWait(b, Duration.ofSeconds(60), Duration.ofMillis(20));
    }

    private static void screenshot(WebDriver b, String name) throws Exception {
        Path out = Path.of("target", "playground-" + name + ".png");
        Files.createDirectories(out.getParent());
        Files.write(out, ((TakesScreenshot) b).getScreenshotAs(OutputType.BYTES));
    }

    private static String lastAssistant(WebDriver b) {
        List<WebElement> replies = b.findElements(By.cssSelector("#log .msg.assistant .text"));
        return replies.isEmpty() ? "" : replies.getLast().getText();
    }

    private static boolean streaming(WebDriver b) {
        return "true".equals(b.findElement(By.tagName("body")).getDomAttribute("data-streaming"));
    }

    private static double metric(String name) throws Exception {
        String page = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(server.url("/metrics"))).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "\\{[^}]*\\} (\\S+)$").matcher(page);
        return m.find() ? Double.parseDouble(m.group(1)) : 0;
    }

    private static void setValue(WebDriver b, String id, String value) {
        WebElement e = b.findElement(By.id(id));
        e.clear();
        e.sendKeys(value);
    }

    @Test
    void aReplyStreamsIntoThePageStopCancelsItOnTheServerAndAReloadKeepsTheConversation() throws Exception {
        browser.get(server.url("/"));
        browser.manage().deleteAllCookies();
        ((JavascriptExecutor) browser).executeScript("localStorage.clear()");
        browser.navigate().refresh();
        waiting(browser).until(b -> !new Select(b.findElement(By.id("model"))).getOptions().isEmpty());
        assertEquals("stories", new Select(browser.findElement(By.id("model"))).getFirstSelectedOption().getText());
        setValue(browser, "max_tokens", "80");   // stories260K holds 128 tokens, the chatml prompt about 30
        setValue(browser, "temperature", "0");
        double disconnects = metric("nereid_client_disconnects_total");
        browser.findElement(By.id("prompt")).sendKeys("Once upon a time");
        browser.findElement(By.id("send")).click();
        // the reply grows while the request is still running
        String[] seen = new String[1];
        waiting(browser).until(b -> streaming(b) && !(seen[0] = lastAssistant(b)).isEmpty());
        waiting(browser).until(b -> streaming(b) && lastAssistant(b).length() > seen[0].length());
        screenshot(browser, "streaming");
        browser.findElement(By.id("stop")).click();
        waiting(browser).until(b -> !streaming(b));
        String partial = lastAssistant(browser);
        assertFalse(partial.isEmpty());
        assertTrue(browser.findElement(By.cssSelector("#log .msg.assistant:last-child .stats")).getText().contains("stopped"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (metric("nereid_client_disconnects_total") <= disconnects) {
            assertTrue(System.nanoTime() < deadline, "the server did not see the request cancelled");
            Thread.sleep(20);
        }
        browser.navigate().refresh();
        waiting(browser).until(b -> b.findElements(By.cssSelector("#log .msg")).size() == 2);
        assertEquals("Once upon a time", browser.findElement(By.cssSelector("#log .msg.user .text")).getText());
        assertEquals(partial, lastAssistant(browser), "the conversation is kept in the browser");
        screenshot(browser, "reloaded");
    }

    @Test
    void markupInAMessageIsShownAsTextNeverRun() throws Exception {
        browser.get(server.url("/"));
        waiting(browser).until(b -> !new Select(b.findElement(By.id("model"))).getOptions().isEmpty());
        browser.findElement(By.id("clear")).click();
        setValue(browser, "max_tokens", "3");
        String evil = "<b>bold</b><script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\">";
        browser.findElement(By.id("prompt")).sendKeys(evil);
        browser.findElement(By.id("send")).click();
        waiting(browser).until(b -> !streaming(b) && b.findElements(By.cssSelector("#log .msg.assistant")).size() == 1);
        assertEquals(evil, browser.findElement(By.cssSelector("#log .msg.user .text")).getText());
        assertTrue(browser.findElements(By.cssSelector("#log script, #log img, #log b")).isEmpty());
        assertNull(((JavascriptExecutor) browser).executeScript("return window.pwned === undefined ? null : window.pwned"));
        screenshot(browser, "markup");
    }

    @Test
    void inToolModeACallStreamsIntoTheReplyAndItsResultGoesBack() throws Exception {
        browser.get(server.url("/"));
        waiting(browser).until(b -> !new Select(b.findElement(By.id("model"))).getOptions().isEmpty());
        browser.findElement(By.id("clear")).click();
        setValue(browser, "max_tokens", "75");   // with the 49-token prompt, within stories260K's 128
        setValue(browser, "temperature", "0");
        setValue(browser, "tools", "[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"strict\":true,"
                + "\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"enum\":[\"Paris\",\"Rome\"]}},"
                + "\"required\":[\"city\"],\"additionalProperties\":false}}}]");
        new Select(browser.findElement(By.id("tool_choice"))).selectByValue("required");
        browser.findElement(By.id("prompt")).sendKeys("Weather in Paris?");
        browser.findElement(By.id("send")).click();
        waiting(browser).until(b -> !streaming(b) && b.findElements(By.cssSelector("#log .msg.assistant")).size() == 1);
        String reply = lastAssistant(browser);
        assertTrue(reply.contains("\u2192 get_weather({"), reply);
        screenshot(browser, "tools");
        // the result goes back as a tool message with the call's id, and the model answers after it
        new Select(browser.findElement(By.id("tool_choice"))).selectByValue("none");
        setValue(browser, "max_tokens", "3");
        browser.findElement(By.cssSelector("#log .tool-results textarea.tool-result")).sendKeys("{\"temp\": 21}");
        browser.findElement(By.cssSelector("#log .tool-results .send-results")).click();
        waiting(browser).until(b -> !streaming(b) && b.findElements(By.cssSelector("#log .msg.assistant")).size() == 2);
        assertEquals(1, browser.findElements(By.cssSelector("#log .msg.tool")).size());
        assertTrue(browser.findElements(By.cssSelector("#log .msg.error")).isEmpty(), () -> browser.findElement(
                By.id("log")).getText());
        Object sent = ((JavascriptExecutor) browser).executeScript("const m = JSON.parse(localStorage.getItem("
                + "'nereid.playground.v1')).messages; const t = m.find(x => x.role === 'tool'); const a = m.find(x => x.tool_calls);"
                + " return t && a && t.tool_call_id === a.tool_calls[0].id && t.tool_call_id.startsWith('call_')"
                + " && t.content === '{\"temp\": 21}';");
        assertEquals(Boolean.TRUE, sent, "the tool message carries the call's id and the result");
        screenshot(browser, "tool-result");
        setValue(browser, "tools", "");
        new Select(browser.findElement(By.id("tool_choice"))).selectByValue("auto");
    }

    @Test
    void withAnApiKeyThePageWorksOnceTheKeyIsEnteredAndTheApiRefusesWithoutIt() throws Exception {
        try (TestServer guarded = TestServer.start("--served-model-name", "stories", "--chat-template", "chatml",
                "--threads", "1", "--api-key", "s3cret")) {
            HttpClient http = HttpClient.newHttpClient();
            assertEquals(200, http.send(HttpRequest.newBuilder(URI.create(guarded.url("/"))).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode(), "the static page is open");
            assertEquals(401, http.send(HttpRequest.newBuilder(URI.create(guarded.url("/v1/models"))).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode());
            WebDriver b = chromium();
            try {
                b.get(guarded.url("/"));
                ((JavascriptExecutor) b).executeScript("localStorage.clear()");
                b.navigate().refresh();
                waiting(b).until(x -> x.findElement(By.id("status")).getText().contains("401"));
                setValue(b, "key", "s3cret");
                b.findElement(By.id("system")).click();   // the key field's change event
                waiting(b).until(x -> !new Select(x.findElement(By.id("model"))).getOptions().isEmpty());
                setValue(b, "max_tokens", "4");
                b.findElement(By.id("prompt")).sendKeys("Hi");
                b.findElement(By.id("send")).click();
                waiting(b).until(x -> !streaming(x) && x.findElements(By.cssSelector("#log .msg.assistant")).size() == 1);
                assertFalse(b.findElement(By.cssSelector("#log .msg.assistant")).getDomAttribute("class").contains("error"),
                        b.findElement(By.cssSelector("#log .msg.assistant")).getText());
                screenshot(b, "api-key");
            } finally {
                b.quit();
            }
        }
    }

    @Test
    void onAPhoneSizedScreenNothingOverflowsAndTheComposerIsReachable() throws Exception {
        org.openqa.selenium.Dimension before = browser.manage().window().getSize();
        try {
            browser.manage().window().setSize(new org.openqa.selenium.Dimension(390, 844));
            browser.get(server.url("/"));
            waiting(browser).until(b -> !new Select(b.findElement(By.id("model"))).getOptions().isEmpty());
            Object overflow = ((JavascriptExecutor) browser).executeScript(
                    "return document.documentElement.scrollWidth - document.documentElement.clientWidth");
            assertEquals(0L, ((Number) overflow).longValue(), "no horizontal scrolling");
            WebElement send = browser.findElement(By.id("send"));
            assertTrue(send.isDisplayed());
            Object right = ((JavascriptExecutor) browser).executeScript(
                    "return document.getElementById('send').getBoundingClientRect().right");
            assertTrue(((Number) right).doubleValue() <= 390, "the Send button fits the width");
            screenshot(browser, "phone");
        } finally {
            browser.manage().window().setSize(before);
        }
    }

    @Test
    void noPlaygroundMeansNothingAtTheRoot() throws Exception {
        try (TestServer off = TestServer.start("--no-playground", "--threads", "1")) {
            assertEquals(404, HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(off.url("/"))).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode());
        }
    }
}
