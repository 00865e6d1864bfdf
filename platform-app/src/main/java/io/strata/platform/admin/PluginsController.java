package io.strata.platform.admin;

import io.strata.platform.config.PluginProperties;
import io.strata.platform.engine.InferenceEngine;
import io.strata.platform.engine.ServingBackend;
import io.strata.platform.plugins.PluginHost;
import io.strata.platform.plugins.PluginInstallException;
import io.strata.platform.plugins.PluginView;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.codec.multipart.FilePart;
import org.springframework.http.codec.multipart.Part;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.util.UriComponentsBuilder;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The Plugins page: every jar in the plugins folder with its state and probe result, enable/disable,
 * and upload. Outcomes travel back to the page as {@code notice}/{@code error} query parameters
 * (WebFlux has no flash attributes), so a reload never repeats an action.
 */
@Controller
public class PluginsController {
    private static final Logger log = LoggerFactory.getLogger(PluginsController.class);

    private final PluginHost host;
    private final PluginProperties properties;
    private final ServingBackend serving;
    private final InferenceEngine engine;

    public PluginsController(PluginHost host, PluginProperties properties, ServingBackend serving, InferenceEngine engine) {
        this.host = host;
        this.properties = properties;
        this.serving = serving;
        this.engine = engine;
    }

    @GetMapping("/admin/plugins")
    public String plugins(Model model, @RequestParam(required = false) String notice,
                          @RequestParam(required = false) String error) {
        model.addAttribute("plugins", host.plugins());
        model.addAttribute("servingView", ServingView.of(serving, engine.status()));
        model.addAttribute("pluginsDir", host.pluginsDir().toString());
        model.addAttribute("maxUploadMb", properties.maxUploadSize().toMegabytes());
        model.addAttribute("notice", notice);
        model.addAttribute("error", error);
        return "admin/plugins";
    }

    @PostMapping("/admin/plugins/{id}/disable")
    public Mono<String> disable(@PathVariable String id) {
        return blocking(() -> host.disable(id))
                .map(view -> redirect("notice", "Plugin " + view.pluginId() + " disabled; it stays disabled after a restart."))
                .onErrorResume(IllegalArgumentException.class, e -> Mono.just(redirect("error", e.getMessage())));
    }

    @PostMapping("/admin/plugins/{id}/enable")
    public Mono<String> enable(@PathVariable String id) {
        return blocking(() -> host.enable(id))
                .map(view -> view.failed()
                        ? redirect("error", "Plugin " + view.pluginId() + " FAILED: " + view.reason())
                        : redirect("notice", "Plugin " + view.pluginId() + " enabled: " + view.state() + "."))
                .onErrorResume(IllegalArgumentException.class, e -> Mono.just(redirect("error", e.getMessage())));
    }

    @PostMapping("/admin/plugins/{id}/remove")
    public Mono<String> remove(@PathVariable String id) {
        return blocking(() -> host.remove(id))
                .map(file -> redirect("notice", "Plugin " + id + " removed: " + file + " deleted from the plugins folder."))
                .onErrorResume(IllegalArgumentException.class, e -> Mono.just(redirect("error", e.getMessage())))
                .onErrorResume(IOException.class, e -> Mono.just(redirect("error", "Cannot delete the jar of " + id + ": " + e.getMessage())));
    }

    @PostMapping("/admin/plugins/upload")
    public Mono<String> upload(ServerWebExchange exchange) {
        long limit = properties.maxUploadSize().toBytes();
        return exchange.getMultipartData()
                .flatMap(parts -> {
                    Part part = parts.getFirst("jar");
                    if (!(part instanceof FilePart file) || file.filename().isBlank()) {
                        return Mono.just(redirect("error", "Choose a plugin jar to upload."));
                    }
                    if (!file.filename().endsWith(".jar")) {
                        return file.content().doOnNext(DataBufferUtils::release).then(
                                Mono.just(redirect("error", "Rejected: " + file.filename() + " is not a .jar file")));
                    }
                    return receive(file, limit).flatMap(temp -> blocking(() -> {
                        try {
                            PluginView view = host.install(temp);
                            return view.failed()
                                    ? redirect("error", "Installed " + view.pluginId() + " but it FAILED: " + view.reason())
                                    : redirect("notice", "Installed plugin " + view.pluginId() + " " + view.version() + ": " + view.state() + ".");
                        } catch (PluginInstallException e) {
                            return redirect("error", e.getMessage());
                        } finally {
                            Files.deleteIfExists(temp);
                        }
                    }));
                })
                .onErrorResume(DataBufferLimitException.class, e -> Mono.just(tooLarge()))
                .onErrorResume(UploadTooLarge.class, e -> Mono.just(tooLarge()));
    }

    /** Streams the upload into a temp file, refusing it as soon as it passes the size limit. */
    private Mono<Path> receive(FilePart file, long limit) {
        return Mono.fromCallable(() -> Files.createTempFile("strata-upload-", ".jar"))
                .subscribeOn(Schedulers.boundedElastic())
                .flatMap(temp -> {
                    AtomicLong size = new AtomicLong();
                    Flux<DataBuffer> bounded = file.content().map(buffer -> {
                        if (size.addAndGet(buffer.readableByteCount()) > limit) {
                            DataBufferUtils.release(buffer);
                            throw new UploadTooLarge();
                        }
                        return buffer;
                    });
                    return DataBufferUtils.write(bounded, temp)
                            .then(Mono.just(temp))
                            .onErrorResume(e -> {
                                deleteQuietly(temp);
                                return Mono.error(e);
                            });
                });
    }

    private String tooLarge() {
        return redirect("error", "Rejected: the jar is larger than " + properties.maxUploadSize().toMegabytes()
                + " MB (strata.plugins.max-upload-size)");
    }

    private static <T> Mono<T> blocking(ThrowingSupplier<T> work) {
        return Mono.fromCallable(work::get).subscribeOn(Schedulers.boundedElastic());
    }

    private static String redirect(String kind, String message) {
        return "redirect:" + UriComponentsBuilder.fromPath("/admin/plugins")
                .queryParam(kind, message).encode().build().toUriString();
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            log.warn("Cannot delete {}", file, e);
        }
    }

    @FunctionalInterface
    private interface ThrowingSupplier<T> {
        T get() throws Exception;
    }

    private static final class UploadTooLarge extends RuntimeException {
        UploadTooLarge() {
            super("upload too large", null, false, false);
        }
    }
}
