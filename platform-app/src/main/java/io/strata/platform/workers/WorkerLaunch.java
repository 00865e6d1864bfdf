package io.strata.platform.workers;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.jar.JarFile;

/**
 * How to start a worker: the platform's own java binary and class path, the JVM flags plugins need, and the
 * worker's arguments ({@link WorkerMain}).
 *
 * @param name             for logs and the console, e.g. {@code worker-0}
 * @param pluginJar        the backend plugin's jar
 * @param pluginId         its id
 * @param modelDir         the checkpoint folder
 * @param modelId          the served model's id
 * @param maxBatchTokens   {@code LoadOptions.maxBatchTokens}
 * @param maxBatchRequests {@code LoadOptions.maxBatchRequests}
 * @param settings         the backend's {@code strata.<plugin id>.*} settings
 * @param jvmOptions       extra JVM options ({@code strata.engine.worker-jvm-options})
 */
public record WorkerLaunch(String name, Path pluginJar, String pluginId, Path modelDir, String modelId,
                           int maxBatchTokens, int maxBatchRequests, Map<String, String> settings,
                           List<String> jvmOptions) {

    /** JVM flags of this process that a worker needs too (vector API, native access, opened modules). */
    private static final List<String> INHERITED = List.of("--add-modules", "--enable-native-access", "--add-opens",
            "--add-exports", "--enable-preview", "--sun-misc-unsafe-memory-access", "-Xss", "-Dorg.bytedeco.");

    public WorkerLaunch {
        settings = Map.copyOf(settings);
        jvmOptions = List.copyOf(jvmOptions);
    }

    /** {@code strata.engine.worker-jvm-options} as a list. */
    public static List<String> parseOptions(String options) {
        return options == null || options.isBlank() ? List.of() : Arrays.asList(options.trim().split("\\s+"));
    }

    /** The command line that starts the worker listening on {@code socket}, beating every {@code heartbeat}. */
    List<String> command(Path socket, Duration heartbeat) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (INHERITED.stream().anyMatch(arg::startsWith)) {
                cmd.add(arg);
            }
        }
        cmd.addAll(jvmOptions);
        String classPath = System.getProperty("java.class.path");
        cmd.add("-cp");
        cmd.add(classPath);
        if (isBootJar(classPath)) {
            // java -jar platform-app-exec.jar: the classes sit under BOOT-INF, reached through Boot's launcher
            cmd.add("-Dloader.main=" + WorkerMain.class.getName());
            cmd.add("org.springframework.boot.loader.launch.PropertiesLauncher");
        } else {
            cmd.add(WorkerMain.class.getName());
        }
        cmd.addAll(arguments(socket, heartbeat));
        return cmd;
    }

    List<String> arguments(Path socket, Duration heartbeat) {
        List<String> args = new ArrayList<>(List.of("--socket=" + socket, "--heartbeat-interval-ms=" + heartbeat.toMillis(),
                "--plugin-jar=" + pluginJar.toAbsolutePath(),
                "--plugin=" + pluginId, "--model=" + modelDir.toAbsolutePath(), "--model-id=" + modelId,
                "--max-batch-tokens=" + maxBatchTokens, "--max-batch-requests=" + maxBatchRequests));
        settings.forEach((k, v) -> args.add("--setting." + k + "=" + v));
        return args;
    }

    private static boolean isBootJar(String classPath) {
        if (classPath.contains(java.io.File.pathSeparator) || !classPath.endsWith(".jar") || !Files.isRegularFile(Path.of(classPath))) {
            return false;
        }
        try (JarFile jar = new JarFile(classPath)) {
            return jar.getEntry("BOOT-INF/classes/") != null;
        } catch (java.io.IOException e) {
            return false;
        }
    }
}
