package io.strata.backend.cuda;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kernels are launched with programmatic dependent launch ({@code numerics.cuh}): a kernel may start while the one
 * before it in its stream still runs, and only its {@code strata_grid_begin} makes it wait for that kernel's writes.
 * A kernel whose body does anything before that call could read a buffer before it is written or overwrite one still
 * being read, so this checks the CUDA sources: every kernel's first statement is {@code strata_grid_begin();}, and
 * every launch with a stream goes through {@code strata_launch} / {@code strata_launch_cluster}.
 */
class KernelLaunchSourcesTest {
    /** The sources from the module (Maven) or from the repository root (the GPU test bundle runs there). */
    private static final Path NATIVE = Files.isDirectory(Path.of("src/main/native")) ? Path.of("src/main/native")
        : Path.of("backend-cuda/src/main/native");
    /** {@code __global__}, then anything up to the parameter list's closing parenthesis and the body's brace. */
    private static final Pattern KERNEL = Pattern.compile("__global__\\s[^;{]*?\\)\\s*\\{");
    /** A triple-chevron launch with a fourth (stream) argument. */
    private static final Pattern STREAM_LAUNCH = Pattern.compile("<<<[^;>]*,[^;>]*,[^;>]*,[^;>]*>>>");

    private static List<Path> sources() throws IOException {
        try (Stream<Path> s = Files.list(NATIVE)) {
            return s.filter(p -> p.toString().endsWith(".cu") || p.toString().endsWith(".cuh")).sorted().toList();
        }
    }

    @Test
    void everyKernelWaitsForTheGridAsItsFirstStatement() throws IOException {
        List<String> kernels = new ArrayList<>();
        List<String> offenders = new ArrayList<>();
        for (Path p : sources()) {
            String src = Files.readString(p);
            Matcher m = KERNEL.matcher(src);
            while (m.find()) {
                String signature = src.substring(m.start(), m.end()).replaceAll("\\s+", " ");
                kernels.add(p.getFileName() + ": " + signature);
                String body = src.substring(m.end()).stripLeading();
                if (!body.startsWith("strata_grid_begin();")) {
                    offenders.add(p.getFileName() + ": " + signature);
                }
            }
        }
        assertThat(kernels).as("kernels found in %s", NATIVE).hasSizeGreaterThan(40);
        assertThat(offenders).as("kernels whose first statement is not strata_grid_begin()").isEmpty();
    }

    @Test
    void launchesOnAStreamGoThroughStrataLaunch() throws IOException {
        List<String> raw = new ArrayList<>();
        for (Path p : sources()) {
            Matcher m = STREAM_LAUNCH.matcher(Files.readString(p));
            while (m.find()) {
                raw.add(p.getFileName() + ": " + m.group());
            }
        }
        assertThat(raw).as("<<<grid, block, smem, stream>>> launches (use strata_launch)").isEmpty();
    }
}
