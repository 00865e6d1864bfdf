package io.strata.platform.engine;

/**
 * The served model as the API describes it.
 *
 * @param id          name clients pass as {@code model}
 * @param root        where the checkpoint came from
 * @param maxModelLen prompt + output tokens one request may reach
 * @param vocabSize   logits row length
 * @param created     load time, epoch seconds
 */
public record ModelCard(String id, String root, int maxModelLen, int vocabSize, long created) {
}
