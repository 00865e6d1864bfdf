package io.strata.backend.cpu.model;

/**
 * Grow-only float buffers owned by one module instance, so a decode step allocates nothing large: each
 * numbered slot keeps the biggest array it was asked for. Steps run one at a time (the executor is
 * synchronized), and a slot's contents are not preserved between uses.
 */
final class Scratch {
    private final float[][] slots;

    Scratch(int count) {
        slots = new float[count][0];
    }

    /** A buffer of at least {@code size} floats for {@code slot}; contents are garbage. */
    float[] get(int slot, int size) {
        if (slots[slot].length < size) {
            slots[slot] = new float[Math.max(size, slots[slot].length + slots[slot].length / 2)];
        }
        return slots[slot];
    }

    /** As {@link #get}, zero-filled over the first {@code size} floats. */
    float[] zeroed(int slot, int size) {
        float[] a = get(slot, size);
        java.util.Arrays.fill(a, 0, size, 0f);
        return a;
    }
}
