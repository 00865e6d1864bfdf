package io.strata.model.checkpoint;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;

/**
 * All tensors of a model directory: either one {@code model.safetensors}, or the shards listed in
 * {@code model.safetensors.index.json} ({@code weight_map: tensor → shard}). Every shard is mapped, and the
 * index must agree with the shards exactly (no tensor missing from its shard, none unlisted, none in two
 * shards). Closing unmaps everything.
 */
public final class Checkpoint implements TensorSet, AutoCloseable {

    public static final String INDEX_FILE = "model.safetensors.index.json";
    public static final String SINGLE_FILE = "model.safetensors";

    private final Path directory;
    private final List<SafetensorsFile> files;
    private final SortedMap<String, Tensor> tensors;

    private Checkpoint(Path directory, List<SafetensorsFile> files, SortedMap<String, Tensor> tensors) {
        this.directory = directory;
        this.files = List.copyOf(files);
        this.tensors = Collections.unmodifiableSortedMap(tensors);
    }

    /** Opens the checkpoint in {@code directory} (sharded if an index is present, else single-file). */
    public static Checkpoint open(Path directory) {
        Path index = directory.resolve(INDEX_FILE);
        if (Files.isRegularFile(index)) {
            return openSharded(index);
        }
        Path single = directory.resolve(SINGLE_FILE);
        if (Files.isRegularFile(single)) {
            return openFiles(directory, List.of(single), null);
        }
        throw new CheckpointException(directory.toString(), null,
                "no " + INDEX_FILE + " and no " + SINGLE_FILE + " in this directory");
    }

    /** Opens a sharded checkpoint from its index file. */
    public static Checkpoint openSharded(Path indexFile) {
        String name = indexFile.toString();
        JsonNode root;
        try {
            root = SafetensorsFile.JSON.readTree(Files.readString(indexFile));
        } catch (IOException e) {
            throw new CheckpointException(name, null, "cannot read: " + e.getMessage(), e);
        } catch (JacksonException e) {
            throw new CheckpointException(name, null, "not valid JSON: " + e.getOriginalMessage());
        }
        JsonNode map = root == null ? null : root.get("weight_map");
        if (map == null || !map.isObject()) {
            throw new CheckpointException(name, null, "missing object 'weight_map'");
        }
        Map<String, String> weightMap = java.util.HashMap.newHashMap(map.size());
        var shards = new TreeSet<String>();
        for (var e : map.properties()) {
            if (!e.getValue().isString()) {
                throw new CheckpointException(name, e.getKey(), "weight_map value must be a file name");
            }
            String shard = e.getValue().stringValue();
            if (shard.contains("/") || shard.contains("\\") || shard.equals("..")) {
                throw new CheckpointException(name, e.getKey(), "shard '" + shard + "' must be a plain file name");
            }
            weightMap.put(e.getKey(), shard);
            shards.add(shard);
        }
        Path dir = indexFile.toAbsolutePath().getParent();
        List<Path> paths = new ArrayList<>();
        for (String shard : shards) {
            Path p = dir.resolve(shard);
            if (!Files.isRegularFile(p)) {
                String example = weightMap.entrySet().stream().filter(x -> x.getValue().equals(shard))
                        .map(Map.Entry::getKey).sorted().findFirst().orElse(null);
                throw new CheckpointException(name, example, "shard '" + shard + "' listed in weight_map does not exist");
            }
            paths.add(p);
        }
        return openFiles(dir, paths, weightMap);
    }

    private static Checkpoint openFiles(Path dir, List<Path> paths, Map<String, String> weightMap) {
        List<SafetensorsFile> opened = new ArrayList<>();
        try {
            SortedMap<String, Tensor> all = new TreeMap<>();
            for (Path p : paths) {
                SafetensorsFile f = SafetensorsFile.open(p);
                opened.add(f);
                String shard = p.getFileName().toString();
                for (Tensor t : f.tensors().values()) {
                    Tensor previous = all.putIfAbsent(t.name(), t);
                    if (previous != null) {
                        throw new CheckpointException(p.toString(), t.name(), "also present in " + previous.file());
                    }
                    if (weightMap != null && !shard.equals(weightMap.get(t.name()))) {
                        throw new CheckpointException(p.toString(), t.name(), weightMap.containsKey(t.name())
                                ? "index says it lives in '" + weightMap.get(t.name()) + "'"
                                : "present in the shard but not listed in " + INDEX_FILE);
                    }
                }
            }
            if (weightMap != null && weightMap.size() != all.size()) {
                List<String> absent = weightMap.keySet().stream().filter(n -> !all.containsKey(n)).sorted().toList();
                String first = absent.getFirst();
                throw new CheckpointException(dir.resolve(weightMap.get(first)).toString(), first,
                        "listed in " + INDEX_FILE + " but absent from the shard"
                                + (absent.size() > 1 ? " (and " + (absent.size() - 1) + " more: "
                                + String.join(", ", absent.subList(1, Math.min(absent.size(), 11))) + ")" : ""));
            }
            return new Checkpoint(dir, opened, all);
        } catch (RuntimeException e) {
            opened.forEach(SafetensorsFile::close);
            throw e;
        }
    }

    public Path directory() {
        return directory;
    }

    public List<SafetensorsFile> files() {
        return files;
    }

    /** Every tensor by name, sorted. */
    @Override
    public SortedMap<String, Tensor> tensors() {
        return tensors;
    }

    @Override
    public CheckpointException noSuchTensor(String name) {
        return new CheckpointException(directory.toString(), name, "no such tensor in the checkpoint");
    }

    public int size() {
        return tensors.size();
    }

    @Override
    public void close() {
        RuntimeException first = null;
        for (SafetensorsFile f : files) {
            try {
                f.close();
            } catch (RuntimeException e) {
                first = first == null ? e : first;
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
