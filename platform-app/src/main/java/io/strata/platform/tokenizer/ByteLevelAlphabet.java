package io.strata.platform.tokenizer;

/**
 * The byte-level BPE alphabet: every byte value has a printable stand-in character, so a token string in
 * {@code tokenizer.json} spells its bytes. Printable Latin-1 bytes stand for themselves; the other 68
 * bytes (controls, space, DEL, NBSP, soft hyphen) are shifted to U+0100 upwards in byte order.
 */
final class ByteLevelAlphabet {

    private static final int UNMAPPED = -1;
    private final int[] byteOfChar = new int[0x200];

    ByteLevelAlphabet() {
        java.util.Arrays.fill(byteOfChar, UNMAPPED);
        int shifted = 0;
        for (int b = 0; b < 256; b++) {
            boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            int stand = printable ? b : 256 + shifted++;
            byteOfChar[stand] = b;
        }
    }

    /**
     * The bytes a token string stands for. Like the Hugging Face ByteLevel decoder, a token with any
     * character outside the alphabet (added tokens such as {@code <｜User｜>}) is taken as its own UTF-8.
     */
    byte[] bytesOf(String token) {
        byte[] out = new byte[token.length()];
        int n = 0;
        for (int i = 0; i < token.length(); i++) {
            char c = token.charAt(i);
            int b = c < byteOfChar.length ? byteOfChar[c] : UNMAPPED;
            if (b == UNMAPPED) {
                return token.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            }
            out[n++] = (byte) b;
        }
        return out;
    }
}
