package io.strata.platform.plugins;

import io.strata.spi.BackendProvider;
import org.pf4j.ExtensionPoint;
import org.springframework.test.context.DynamicPropertyRegistry;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;

/**
 * Plugin jars for tests: the real ones the build produced (copied to target/test-plugins by the
 * dependency plugin, never put on the class path), and hand-made ones compiled here at run time so
 * their classes exist only inside the jar, as with a third-party plugin.
 */
public final class PluginJars {
    private PluginJars() {
    }

    public static Path builtPluginsDir() {
        String dir = System.getProperty("strata.test.plugins.dir");
        if (dir == null) {
            throw new IllegalStateException("system property strata.test.plugins.dir is not set (run through Maven)");
        }
        return Path.of(dir);
    }

    public static Path builtJar(String artifactId) {
        try (Stream<Path> files = Files.list(builtPluginsDir())) {
            return files.filter(p -> p.getFileName().toString().startsWith(artifactId + "-") && p.toString().endsWith(".jar"))
                    .findFirst()
                    .orElseThrow(() -> new IllegalStateException("no " + artifactId + " jar in " + builtPluginsDir()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Copies the CPU (example) and CUDA plugin jars into {@code dir}. */
    /** For a {@code @DynamicPropertySource}: copies the built plugins into {@code dir} and serves them from there. */
    public static void serveBuiltPlugins(DynamicPropertyRegistry registry, Path dir) throws IOException {
        copyBuiltPlugins(dir);
        registry.add("strata.plugins.dir", dir::toString);
    }

    public static void copyBuiltPlugins(Path dir) throws IOException {
        Files.createDirectories(dir);
        for (String artifact : List.of("backend-plugin-example", "backend-cuda")) {
            Path jar = builtJar(artifact);
            Files.copy(jar, dir.resolve(jar.getFileName()), StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** Bytes that are not a zip at all. */
    public static Path corruptJar(Path file) throws IOException {
        Files.write(file, "PK\u0003\u0004 this is not really a jar".getBytes(StandardCharsets.ISO_8859_1));
        return file;
    }

    /** A well-formed jar with a class in it but no plugin descriptor. */
    public static Path notAPluginJar(Path file) throws IOException {
        Map<String, byte[]> classes = compile(Map.of("lib.Util", "package lib; public class Util { public static int one() { return 1; } }"));
        writeJar(file, classes, Map.of("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n"));
        return file;
    }

    /** A plugin whose {@code Plugin.start()} throws. */
    public static Path pluginThatFailsToStart(Path file, String id) throws IOException {
        String pkg = "test." + id.replace('-', '_');
        String plugin = pkg + ".FailingPlugin";
        Map<String, byte[]> classes = compile(Map.of(plugin, """
                package %s;
                public class FailingPlugin extends org.pf4j.Plugin {
                    @Override public void start() { throw new IllegalStateException("license check failed at start"); }
                }
                """.formatted(pkg)));
        writeJar(file, classes, Map.of("plugin.properties", descriptor(id, "1.0.0", plugin)));
        return file;
    }

    /** A plugin whose backend's {@code probe()} throws. */
    public static Path pluginWhoseProbeThrows(Path file, String id) throws IOException {
        String pkg = "test." + id.replace('-', '_');
        String provider = pkg + ".ExplodingProvider";
        Map<String, byte[]> classes = compile(Map.of(provider, """
                package %s;
                import io.strata.spi.*;
                @org.pf4j.Extension
                public class ExplodingProvider implements BackendProvider {
                    public BackendIdentity identity() { return new BackendIdentity("%s", "Exploding", "Test", "1.0.0"); }
                    public ProbeResult probe() { throw new IllegalStateException("driver exploded while probing"); }
                }
                """.formatted(pkg, id)));
        writeJar(file, classes, Map.of("plugin.properties", descriptor(id, "1.0.0", null),
                "META-INF/extensions.idx", provider + "\n"));
        return file;
    }

    /** A backend plugin whose plugin.properties names a plugin class the jar does not contain. */
    public static Path pluginWithMissingPluginClass(Path file, String id) throws IOException {
        Path jar = workingPlugin(file, id, "Ghost X1");
        Path rewritten = Files.createTempFile("plugin-", ".jar");
        try (var in = new java.util.jar.JarFile(jar.toFile());
             JarOutputStream out = new JarOutputStream(Files.newOutputStream(rewritten))) {
            for (JarEntry e : java.util.Collections.list(in.entries())) {
                out.putNextEntry(new JarEntry(e.getName()));
                byte[] bytes = in.getInputStream(e).readAllBytes();
                if (e.getName().equals("plugin.properties")) {
                    bytes = (new String(bytes, StandardCharsets.UTF_8) + "plugin.class=test.ghost.MissingPlugin\n").getBytes(StandardCharsets.UTF_8);
                }
                out.write(bytes);
                out.closeEntry();
            }
        }
        Files.move(rewritten, jar, StandardCopyOption.REPLACE_EXISTING);
        return jar;
    }

    /** A correct third-party backend plugin reporting one fake accelerator. */
    public static Path workingPlugin(Path file, String id, String deviceName) throws IOException {
        String pkg = "test." + id.replace('-', '_');
        String provider = pkg + ".FakeAcceleratorProvider";
        Map<String, byte[]> classes = compile(Map.of(provider, """
                package %s;
                import io.strata.spi.*;
                import java.util.*;
                @org.pf4j.Extension
                public class FakeAcceleratorProvider implements BackendProvider {
                    public BackendIdentity identity() { return new BackendIdentity("%s", "Fake accelerator", "Test Vendor", "2.0.0"); }
                    public ProbeResult probe() {
                        return ProbeResult.available(List.of(new DeviceInfo(0, "%s", 8L << 30, 6L << 30, Map.of())), Set.of("kv-fp8"));
                    }
                }
                """.formatted(pkg, id, deviceName)));
        writeJar(file, classes, Map.of("plugin.properties", descriptor(id, "2.0.0", null),
                "META-INF/extensions.idx", provider + "\n"));
        return file;
    }

    /**
     * An execution backend of the given priority whose {@code load} runs out of device memory, the way an
     * accelerator backend reports it: what was needed, what was free, which property to change. The message
     * echoes its {@code memory-fraction} setting, so a test sees {@code strata.<id>.*} arrive.
     */
    public static Path executionBackendOutOfMemory(Path file, String id, int priority) throws IOException {
        String pkg = "test." + id.replace('-', '_');
        String provider = pkg + ".OutOfMemoryBackend";
        Map<String, byte[]> classes = compile(Map.of(provider, """
                package %s;
                import io.strata.spi.*;
                import io.strata.spi.exec.*;
                import java.util.*;
                @org.pf4j.Extension
                public class OutOfMemoryBackend implements BackendProvider, ExecutionBackend {
                    public BackendIdentity identity() { return new BackendIdentity("%s", "Small accelerator", "Test Vendor", "1.0.0"); }
                    public ProbeResult probe() {
                        return ProbeResult.available(List.of(new DeviceInfo(0, "Small X1", 1L << 30, 1L << 30, Map.of())), Set.of("execution"));
                    }
                    public int priority() { return %d; }
                    public BackendCapabilities capabilities() {
                        return new BackendCapabilities(1L << 30, EnumSet.allOf(io.strata.kv.MainKvDtype.class),
                                EnumSet.allOf(io.strata.kv.IndexerKvDtype.class), false, 8192, 256);
                    }
                    public ModelExecutor load(io.strata.model.config.ModelConfig config,
                                              io.strata.model.checkpoint.Checkpoint checkpoint, LoadOptions options) {
                        throw new IllegalStateException("out of device memory on Small X1: the weights need 40.0 GiB, 1.0 GiB is free;"
                                + " use a smaller model or another backend (strata.%s.memory-fraction="
                                + options.settings().getOrDefault("memory-fraction", "unset") + ")");
                    }
                }
                """.formatted(pkg, id, priority, id)));
        writeJar(file, classes, Map.of("plugin.properties", descriptor(id, "1.0.0", null),
                "META-INF/extensions.idx", provider + "\n"));
        return file;
    }

    private static String descriptor(String id, String version, String pluginClass) {
        return "plugin.id=" + id + "\nplugin.version=" + version + "\nplugin.provider=Test Vendor\n"
                + "plugin.description=made by a test\n" + (pluginClass == null ? "" : "plugin.class=" + pluginClass + "\n");
    }

    /** Compiles sources against the SPI and PF4J only, as a vendor would. */
    static Map<String, byte[]> compile(Map<String, String> sources) throws IOException {
        Path work = Files.createTempDirectory("plugin-src-");
        List<String> files = new ArrayList<>();
        for (var source : sources.entrySet()) {
            Path file = work.resolve("src").resolve(source.getKey().replace('.', '/') + ".java");
            Files.createDirectories(file.getParent());
            Files.writeString(file, source.getValue());
            files.add(file.toString());
        }
        Path out = Files.createDirectories(work.resolve("classes"));
        String classPath = location(BackendProvider.class) + java.io.File.pathSeparator + location(ExtensionPoint.class);
        List<String> args = new ArrayList<>(List.of("-proc:none", "--release", "25", "-cp", classPath, "-d", out.toString()));
        args.addAll(files);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        int rc = javac.run(null, errors, errors, args.toArray(String[]::new));
        if (rc != 0) {
            throw new IllegalStateException("test plugin does not compile:\n" + errors);
        }
        Map<String, byte[]> classes = new java.util.TreeMap<>();
        try (Stream<Path> walk = Files.walk(out)) {
            for (Path p : walk.filter(Files::isRegularFile).toList()) {
                classes.put(out.relativize(p).toString().replace('\\', '/'), Files.readAllBytes(p));
            }
        }
        return classes;
    }

    private static String location(Class<?> type) {
        try {
            return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void writeJar(Path file, Map<String, byte[]> classes, Map<String, String> resources) throws IOException {
        try (OutputStream out = Files.newOutputStream(file); JarOutputStream jar = new JarOutputStream(out)) {
            for (var resource : resources.entrySet()) {
                jar.putNextEntry(new JarEntry(resource.getKey()));
                jar.write(resource.getValue().getBytes(StandardCharsets.UTF_8));
                jar.closeEntry();
            }
            for (var cls : classes.entrySet()) {
                jar.putNextEntry(new JarEntry(cls.getKey()));
                jar.write(cls.getValue());
                jar.closeEntry();
            }
        }
    }
}
