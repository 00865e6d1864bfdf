package io.strata.platform.engine;

/** Why a choice ended, spelled as OpenAI/vLLM report it. */
public enum FinishReason {
    STOP("stop"), LENGTH("length"), ABORT("abort"), ERROR("error");

    private final String wire;

    FinishReason(String wire) {
        this.wire = wire;
    }

    public String wire() {
        return wire;
    }
}
