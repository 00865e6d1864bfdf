package io.strata.platform.engine.sampling;

import java.util.Arrays;

/**
 * The tokens one choice has seen, kept sparse so penalties cost O(distinct tokens), not O(vocab):
 * counts of generated tokens (presence/frequency penalties) and the distinct prompt tokens
 * (repetition penalty applies to prompt and output alike, as in vLLM).
 */
public final class TokenHistory {
    private static final int EMPTY = -1;

    private final int[] promptDistinct;
    private int[] keys;
    private int[] counts;
    private int size;
    private int generated;

    public TokenHistory(int[] promptTokens) {
        int[] sorted = promptTokens.clone();
        Arrays.sort(sorted);
        int n = 0;
        for (int i = 0; i < sorted.length; i++) {
            if (i == 0 || sorted[i] != sorted[i - 1]) {
                sorted[n++] = sorted[i];
            }
        }
        this.promptDistinct = Arrays.copyOf(sorted, n);
        this.keys = new int[16];
        this.counts = new int[16];
        Arrays.fill(keys, EMPTY);
    }

    public void addGenerated(int token) {
        generated++;
        if ((size + 1) * 2 > keys.length) {
            grow();
        }
        int slot = slotOf(keys, token);
        if (keys[slot] == EMPTY) {
            keys[slot] = token;
            size++;
        }
        counts[slot]++;
    }

    /** Tokens generated so far (drives {@code min_tokens}). */
    public int generatedCount() {
        return generated;
    }

    public int countOf(int token) {
        int slot = slotOf(keys, token);
        return keys[slot] == EMPTY ? 0 : counts[slot];
    }

    int[] promptDistinct() {
        return promptDistinct;
    }

    /** Calls {@code visitor} for every distinct generated token with its count. */
    void forEachGenerated(GeneratedVisitor visitor) {
        for (int i = 0; i < keys.length; i++) {
            if (keys[i] != EMPTY) {
                visitor.visit(keys[i], counts[i]);
            }
        }
    }

    boolean seenInPrompt(int token) {
        return Arrays.binarySearch(promptDistinct, token) >= 0;
    }

    @FunctionalInterface
    interface GeneratedVisitor {
        void visit(int token, int count);
    }

    private void grow() {
        int[] oldKeys = keys;
        int[] oldCounts = counts;
        keys = new int[oldKeys.length * 2];
        counts = new int[oldKeys.length * 2];
        Arrays.fill(keys, EMPTY);
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldKeys[i] != EMPTY) {
                int slot = slotOf(keys, oldKeys[i]);
                keys[slot] = oldKeys[i];
                counts[slot] = oldCounts[i];
            }
        }
    }

    private static int slotOf(int[] table, int token) {
        int mask = table.length - 1;
        int slot = (token * 0x9E3779B1) >>> 7 & mask;
        while (table[slot] != EMPTY && table[slot] != token) {
            slot = (slot + 1) & mask;
        }
        return slot;
    }
}
