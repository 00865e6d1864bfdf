package io.strata.platform.engine;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntPredicate;

/**
 * A deterministic stand-in model for engine/API tests: the next-token distribution depends only on the
 * previous token and the position, strongly favouring printable byte tokens, so runs are reproducible
 * and text is readable. It can be told to fail on a given token (to test error isolation) and to slow
 * down each step (to test disconnects and queue limits).
 */
public final class ScriptedStepRunner implements StepRunner {
    private final int vocab;
    private final int firstPlain;
    private final AtomicInteger steps = new AtomicInteger();
    private volatile IntPredicate failOn = t -> false;
    private volatile long stepDelayMillis;
    private volatile int eosAfter = -1;
    private final int eos;

    public ScriptedStepRunner(int vocab, int firstPlain, int eos) {
        this.vocab = vocab;
        this.firstPlain = firstPlain;
        this.eos = eos;
    }

    public void failWhenInputContains(IntPredicate predicate) {
        this.failOn = predicate;
    }

    public void stepDelay(long millis) {
        this.stepDelayMillis = millis;
    }

    /** Strongly prefers EOS once a sequence has this many tokens (-1: never). */
    public void eosAfterLength(int length) {
        this.eosAfter = length;
    }

    public int steps() {
        return steps.get();
    }

    @Override
    public int vocab() {
        return vocab;
    }

    @Override
    public Output execute(List<Chunk> chunks) {
        steps.incrementAndGet();
        if (stepDelayMillis > 0) {
            try {
                Thread.sleep(stepDelayMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        int rows = 0;
        for (Chunk c : chunks) {
            for (int i = c.start(); i < c.start() + c.count(); i++) {
                if (failOn.test(c.seq().token(i))) {
                    throw new IllegalStateException("scripted backend failure on token " + c.seq().token(i));
                }
            }
            rows += switch (c.logits()) {
                case NONE -> 0;
                case LAST -> 1;
                case ALL -> c.count();
            };
        }
        float[] logits = new float[rows * vocab];
        int row = 0;
        for (Chunk c : chunks) {
            int from = c.logits() == LogitsWanted.ALL ? c.start() : c.start() + c.count() - 1;
            if (c.logits() == LogitsWanted.NONE) {
                continue;
            }
            for (int p = from; p < c.start() + c.count(); p++, row++) {
                fill(logits, row * vocab, c.seq().token(p), p);
            }
        }
        return new Output(MemorySegment.ofArray(logits), vocab);
    }

    private void fill(float[] logits, int off, int prev, int pos) {
        int plain = vocab - firstPlain;
        int favourite = firstPlain + Math.floorMod(prev * 31 + pos * 7 + 5, Math.min(plain, 90));
        for (int i = 0; i < vocab; i++) {
            logits[off + i] = i < firstPlain ? -20f : -Math.abs(i - favourite) * 0.05f;
        }
        logits[off + favourite] = 4f;
        if (eosAfter >= 0 && pos + 1 >= eosAfter) {
            logits[off + eos] = 50f;
        }
    }
}
