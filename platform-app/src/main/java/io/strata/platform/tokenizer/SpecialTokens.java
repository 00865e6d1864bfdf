package io.strata.platform.tokenizer;

import java.util.OptionalInt;

/**
 * Ids of the DeepSeek-V4 control tokens (v4-architecture.md §5). The real V4 tokenizer has them at
 * 0/1 and 128,8xx; the bundled tiny tokenizers at 0–13. Looked up by text, never hard-coded.
 * Ids of tokens a tokenizer lacks are -1 for the optional ones ({@code latestReminder} and the
 * quick-instruction task tokens).
 */
public record SpecialTokens(
        int bos, int eos, int user, int assistant, int thinkStart, int thinkEnd, int dsml,
        int latestReminder, int action, int query, int authority, int domain, int title, int readUrl) {

    public static final String BOS = "<｜begin▁of▁sentence｜>";
    public static final String EOS = "<｜end▁of▁sentence｜>";
    public static final String USER = "<｜User｜>";
    public static final String ASSISTANT = "<｜Assistant｜>";
    public static final String THINK_START = "<think>";
    public static final String THINK_END = "</think>";
    public static final String DSML = "｜DSML｜";
    public static final String LATEST_REMINDER = "<｜latest_reminder｜>";

    static SpecialTokens of(ModelTokenizer t) {
        return new SpecialTokens(
                t.requireTokenId(BOS), t.requireTokenId(EOS), t.requireTokenId(USER), t.requireTokenId(ASSISTANT),
                t.requireTokenId(THINK_START), t.requireTokenId(THINK_END), t.requireTokenId(DSML),
                optional(t, LATEST_REMINDER), optional(t, "<｜action｜>"), optional(t, "<｜query｜>"),
                optional(t, "<｜authority｜>"), optional(t, "<｜domain｜>"), optional(t, "<｜title｜>"),
                optional(t, "<｜read_url｜>"));
    }

    private static int optional(ModelTokenizer t, String token) {
        OptionalInt id = t.tokenId(token);
        return id.orElse(-1);
    }
}
