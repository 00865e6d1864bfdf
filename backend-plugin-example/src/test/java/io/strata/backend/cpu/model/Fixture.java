package io.strata.backend.cpu.model;

import io.strata.backend.cpu.kv.DenseLayerCache;
import io.strata.backend.cpu.kv.LayerCache;
import io.strata.backend.cpu.weights.CheckpointTensors;
import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.checkpoint.SafetensorsFile;
import io.strata.model.checkpoint.Tensor;
import io.strata.model.config.ModelConfig;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** A bundled tiny checkpoint with the reference's outputs (expected.safetensors, manifest.json). */
final class Fixture implements AutoCloseable {
    final Path dir;
    final ModelConfig config;
    final Checkpoint checkpoint;
    final SafetensorsFile expected;
    final JsonNode manifest;
    final CpuModel model;

    private Fixture(String name) throws Exception {
        String root = System.getProperty("strata.models.dir");
        if (root == null) {
            throw new IllegalStateException("system property strata.models.dir is not set (surefire sets it)");
        }
        dir = Path.of(root, name);
        config = ModelConfig.parse(dir.resolve("config.json"));
        checkpoint = Checkpoint.open(dir);
        expected = SafetensorsFile.open(dir.resolve("expected.safetensors"));
        manifest = new ObjectMapper().readTree(Files.readString(dir.resolve("manifest.json")));
        model = new CpuModel(config, new CheckpointTensors(checkpoint.tensors()));
    }

    static Fixture open(String name) throws Exception {
        return new Fixture(name);
    }

    int promptLen(int seq) {
        return manifest.get("sequences").get(seq).get("prompt_len").asInt();
    }

    int[] tokens(int seq) {
        return expected.tensor("seq" + seq + ".tokens").toIntArray();
    }

    Tensor tensor(String name) {
        return expected.tensor(name);
    }

    List<LayerCache> freshCaches() {
        List<LayerCache> caches = new ArrayList<>();
        int stateWidth = 2 * config.attention().headDim();
        for (int l = 0; l < config.numHiddenLayers(); l++) {
            caches.add(new DenseLayerCache(config.attention().headDim(), config.indexer().headDim(), stateWidth,
                2 * config.indexer().headDim()));
        }
        return caches;
    }

    @Override
    public void close() {
        expected.close();
        checkpoint.close();
    }
}
