package io.strata.model.config;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * The two released DeepSeek-V4 models whose {@code config.json} ships with Strata as a resource, rebuilt
 * key by key from the official Hugging Face files. Used for sizing (KV planner, census) without weights.
 */
public enum ReferenceModel {
    V4_FLASH("deepseek-v4-flash.config.json"),
    V4_PRO("deepseek-v4-pro.config.json");

    private final String resource;

    ReferenceModel(String resource) {
        this.resource = resource;
    }

    /** Classpath resource of the config, e.g. {@code io/strata/model/configs/deepseek-v4-flash.config.json}. */
    public String resourcePath() {
        return "io/strata/model/configs/" + resource;
    }

    public ModelConfig config() {
        try (InputStream in = ReferenceModel.class.getClassLoader().getResourceAsStream(resourcePath())) {
            if (in == null) {
                throw new IllegalStateException("missing bundled resource " + resourcePath());
            }
            return ModelConfig.parse(in, resourcePath());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
