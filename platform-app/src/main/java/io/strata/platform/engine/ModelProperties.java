package io.strata.platform.engine;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The served checkpoint ({@code strata.model.*}).
 *
 * @param path          checkpoint directory (config.json, safetensors, tokenizer.json); default the trained
 *                      demo model {@code models/dsv4-demo}
 * @param maxModelLen   context limit per request; default: the model's {@code max_position_embeddings}
 *                      capped at 8192 (a CPU demo default; raise it on a GPU host)
 * @param onLoadFailure {@code fail} (default): a bad checkpoint stops start-up with the loader's error;
 *                      {@code console-only}: start anyway, /health 503 and the error on every API call.
 *                      A backend that cannot load a good checkpoint never stops start-up (see {@link BackendChoice})
 */
@ConfigurationProperties("strata.model")
public record ModelProperties(String path, Integer maxModelLen, String onLoadFailure) {
    public ModelProperties {
        path = path == null || path.isBlank() ? "models/dsv4-demo" : path;
        onLoadFailure = onLoadFailure == null || onLoadFailure.isBlank() ? "fail" : onLoadFailure.trim().toLowerCase();
        if (!onLoadFailure.equals("fail") && !onLoadFailure.equals("console-only")) {
            throw new IllegalArgumentException("strata.model.on-load-failure must be 'fail' or 'console-only', got '" + onLoadFailure + "'");
        }
        if (maxModelLen != null && maxModelLen < 2) {
            throw new IllegalArgumentException("strata.model.max-model-len must be at least 2, got " + maxModelLen);
        }
    }

    public boolean consoleOnlyOnFailure() {
        return onLoadFailure.equals("console-only");
    }
}
