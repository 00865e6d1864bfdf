package io.strata.platform.engine;

/**
 * The engine when it cannot serve: the checkpoint failed to load with
 * {@code strata.model.on-load-failure=console-only}, no plugin offers an execution backend (or not the one
 * {@code strata.backend} names), or no backend could load the model. The
 * console keeps working; /health is 503 with the reason and every generation request is 503 with it.
 * Tokenizer endpoints still work when the tokenizer loaded.
 */
public final class OfflineEngine implements InferenceEngine {
    private final ModelCard model;
    private final TextCodec codec;
    private final String reason;

    public OfflineEngine(ModelCard model, TextCodec codec, String reason) {
        this.model = model;
        this.codec = codec;
        this.reason = reason;
    }

    @Override
    public ModelCard model() {
        return model;
    }

    @Override
    public TextCodec codec() {
        if (codec == null) {
            throw new EngineUnavailableException("No tokenizer loaded: " + reason);
        }
        return codec;
    }

    @Override
    public Submission submit(GenerationRequest request) {
        throw new EngineUnavailableException("The model is not being served: " + reason);
    }

    @Override
    public EngineStatus status() {
        return new EngineStatus(false, reason);
    }
}
