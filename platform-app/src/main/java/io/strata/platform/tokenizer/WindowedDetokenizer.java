package io.strata.platform.tokenizer;

import java.util.Arrays;
import java.util.function.Function;

/**
 * Fallback for tokenizers whose decoder is not plain byte-level (WordPiece, Metaspace, …), where one id's
 * text depends on its neighbours. Each step decodes only a short window — the last emitted token(s) as
 * context plus the tokens not yet emitted — and emits the new text once it no longer ends in U+FFFD.
 */
final class WindowedDetokenizer implements StreamingDetokenizer {

    private final Function<int[], String> decode;
    private int[] ids = new int[32];
    private int size;
    private int contextStart;
    private int emittedEnd;
    private boolean finished;

    WindowedDetokenizer(Function<int[], String> decode) {
        this.decode = decode;
    }

    @Override
    public String next(int tokenId) {
        if (finished) {
            throw new IllegalStateException("detokenizer already finished");
        }
        if (size == ids.length) {
            compact();
        }
        ids[size++] = tokenId;
        String context = decode.apply(Arrays.copyOfRange(ids, contextStart, emittedEnd));
        String window = decode.apply(Arrays.copyOfRange(ids, contextStart, size));
        if (window.length() <= context.length() || window.endsWith("\uFFFD") || !window.startsWith(context)) {
            return "";
        }
        contextStart = emittedEnd;
        emittedEnd = size;
        return window.substring(context.length());
    }

    @Override
    public String finish() {
        if (finished) {
            return "";
        }
        finished = true;
        String context = decode.apply(Arrays.copyOfRange(ids, contextStart, emittedEnd));
        String window = decode.apply(Arrays.copyOfRange(ids, contextStart, size));
        return window.startsWith(context) ? window.substring(context.length()) : window;
    }

    @Override
    public int pending() {
        return size - emittedEnd;
    }

    /** Drops ids before the context window so memory stays bounded by the window, not the sequence. */
    private void compact() {
        int keep = size - contextStart;
        int[] next = new int[Math.max(32, keep * 2)];
        System.arraycopy(ids, contextStart, next, 0, keep);
        emittedEnd -= contextStart;
        size = keep;
        contextStart = 0;
        ids = next;
    }
}
