/**
 * The execution SPI: what a backend plugin implements so the engine can run a DeepSeek-V4 model on it.
 *
 * <p>Life cycle, driven by the engine:
 * <ol>
 *   <li>{@link io.strata.spi.exec.ExecutionBackend#capabilities()} — memory the backend can give to KV
 *       pages, KV dtypes it supports, graph capture, batch limits.</li>
 *   <li>{@link io.strata.spi.exec.ExecutionBackend#load} — weights from the loader's memory-mapped
 *       checkpoint; the backend copies or maps them as it likes.</li>
 *   <li>{@link io.strata.spi.exec.ModelExecutor#allocateKv} — the three page-size bucket pools of a
 *       {@link io.strata.kv.KvLayout}; the engine's cache manager hands out page indices, the backend owns
 *       the bytes and writes them in the layout's exact entry formats.</li>
 *   <li>{@link io.strata.spi.exec.ModelExecutor#execute} — one engine step: a
 *       {@link io.strata.spi.exec.StepBatch} mixing prefill chunks and decode tokens of many requests,
 *       each with its block tables; returns logits for the requested rows.</li>
 * </ol>
 * Nothing here depends on Spring; a step is plain arrays so a GPU backend can copy it to the device in a
 * few transfers.
 */
package io.strata.spi.exec;
