package io.strata.platform.tokenizer;

/**
 * Incremental UTF-8 decoding with the replacement rules of Rust's {@code String::from_utf8_lossy} (which
 * the Hugging Face decoders use): each maximal invalid subpart becomes one U+FFFD. A trailing sequence
 * that is valid so far but incomplete is held (at most 3 bytes) until more bytes arrive. The JDK's
 * decoder replaces some malformed runs differently (for example, a lead byte with a bad second byte), so
 * this small decoder keeps streamed text identical to a whole-sequence decode.
 */
final class LossyUtf8Decoder {

    private static final char REPLACEMENT = '\uFFFD';
    private final byte[] held = new byte[3];
    private int heldLength;

    int held() {
        return heldLength;
    }

    /** Decodes {@code bytes} after the held ones into {@code out}; with {@code end}, nothing is held. */
    void decode(byte[] bytes, boolean end, StringBuilder out) {
        byte[] a;
        int n;
        if (heldLength == 0) {
            a = bytes;
            n = bytes.length;
        } else {
            n = heldLength + bytes.length;
            a = new byte[n];
            System.arraycopy(held, 0, a, 0, heldLength);
            System.arraycopy(bytes, 0, a, heldLength, bytes.length);
            heldLength = 0;
        }
        int i = 0;
        while (i < n) {
            int b = a[i] & 0xFF;
            if (b < 0x80) {
                out.append((char) b);
                i++;
                continue;
            }
            int need;
            int secondLow = 0x80;
            int secondHigh = 0xBF;
            int codePoint;
            if (b >= 0xC2 && b <= 0xDF) {
                need = 1;
                codePoint = b & 0x1F;
            } else if (b >= 0xE0 && b <= 0xEF) {
                need = 2;
                codePoint = b & 0x0F;
                if (b == 0xE0) {
                    secondLow = 0xA0;
                } else if (b == 0xED) {
                    secondHigh = 0x9F; // no UTF-16 surrogates
                }
            } else if (b >= 0xF0 && b <= 0xF4) {
                need = 3;
                codePoint = b & 0x07;
                if (b == 0xF0) {
                    secondLow = 0x90;
                } else if (b == 0xF4) {
                    secondHigh = 0x8F; // nothing above U+10FFFF
                }
            } else {
                out.append(REPLACEMENT);
                i++;
                continue;
            }
            int j = i + 1;
            boolean malformed = false;
            for (int k = 0; k < need; k++, j++) {
                if (j >= n) {
                    if (end) {
                        out.append(REPLACEMENT);
                    } else {
                        heldLength = n - i;
                        System.arraycopy(a, i, held, 0, heldLength);
                    }
                    return;
                }
                int c = a[j] & 0xFF;
                int low = k == 0 ? secondLow : 0x80;
                int high = k == 0 ? secondHigh : 0xBF;
                if (c < low || c > high) {
                    malformed = true;
                    break;
                }
                codePoint = (codePoint << 6) | (c & 0x3F);
            }
            if (malformed) {
                out.append(REPLACEMENT);
            } else {
                out.appendCodePoint(codePoint);
            }
            i = j;
        }
    }
}
