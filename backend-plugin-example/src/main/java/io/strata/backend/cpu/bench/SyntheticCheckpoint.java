package io.strata.backend.cpu.bench;

import io.strata.model.checkpoint.DType;
import io.strata.model.checkpoint.SafetensorsWriter;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Writes a random DeepSeek-V4 checkpoint in the real on-disk format (FP8 e4m3 linears with 128×128 ue8m0
 * scales, FP4 e2m1 experts packed in I8 with ue8m0 per 32, BF16 norms/embeddings/compressors, F32 hc/sink/
 * ape/bias, I64 tid2eid) for a chosen size, so the benchmark measures the same kernels a real model runs.
 */
public final class SyntheticCheckpoint {

    /** The shape of the synthetic model. */
    public record Shape(int hidden, int layers, int heads, int qLora, int oGroups, int oLora, int experts, int topk,
                        int inter, int indexHeads, int indexTopk, int vocab, int hashLayers, int windowLayers) {
        /** One window-only layer first. */
        public Shape(int hidden, int layers, int heads, int qLora, int oGroups, int oLora, int experts, int topk,
                     int inter, int indexHeads, int indexTopk, int vocab, int hashLayers) {
            this(hidden, layers, heads, qLora, oGroups, oLora, experts, topk, inter, indexHeads, indexTopk, vocab,
                hashLayers, 1);
        }

        /** Ratio of layer i: {@code windowLayers} window-only layers, then alternating C4A / C128A, as V4 schedules. */
        public int ratio(int i) {
            return i < windowLayers ? 0 : ((i - windowLayers) % 2 == 0 ? 4 : 128);
        }
    }

    /**
     * The real V4-Flash dimensions (hidden 4096, 64 heads × 512, q_lora 1024, 8 × 1024 output groups, 256
     * experts top-6 with FP4 weights, moe inter 2048, indexer 64 heads top-512, vocab 129,280, three hash
     * layers) and the first {@code layers} layers of its schedule (two window layers, then C4A / C128A).
     */
    public static Shape flash(int layers) {
        return new Shape(4096, layers, 64, 1024, 8, 1024, 256, 6, 2048, 64, 512, 129280, Math.min(3, layers), 2);
    }

    /** hidden 1024, 8 layers: V4 proportions scaled down (head dim, window, indexer dim as the real model). */
    public static final Shape H1024_L8 = new Shape(1024, 8, 16, 512, 4, 512, 32, 6, 512, 16, 64, 16384, 2);

    private final SplittableRandom rnd = new SplittableRandom(42);
    private final Shape s;
    private final boolean stable;
    private final boolean bulk;

    private SyntheticCheckpoint(Shape s, boolean stable, boolean bulk) {
        this.s = s;
        this.stable = stable;
        this.bulk = bulk;
    }

    /** The dimensions of the {@code dsv4-tiny-*} fixtures (hidden 256, 6 layers, vocab 1024 = their tokenizer's). */
    public static final Shape TINY = new Shape(256, 6, 4, 128, 2, 128, 8, 2, 128, 8, 256, 1024, 2);

    /**
     * Writes a model directory for a run without a checkpoint to copy: {@code <dir> tiny|h1024 [stable]}
     * (add the fixtures' {@code tokenizer.json} to serve it).
     */
    public static void main(String[] args) throws IOException {
        if (args.length < 2) {
            System.err.println("usage: SyntheticCheckpoint <dir> tiny|h1024 [stable]");
            System.exit(2);
        }
        Shape shape = switch (args[1]) {
            case "tiny" -> TINY;
            case "h1024" -> H1024_L8;
            default -> throw new IllegalArgumentException("unknown shape " + args[1]);
        };
        Path dir = Path.of(args[0]);
        if (args.length > 2 && args[2].equals("stable")) {
            writeStable(shape, dir);
        } else {
            write(shape, dir);
        }
        System.out.println("wrote " + dir);
    }

    /** Writes {@code config.json} and {@code model.safetensors} into {@code dir}. */
    public static void write(Shape s, Path dir) throws IOException {
        new SyntheticCheckpoint(s, false, false).writeTo(dir);
    }

    /**
     * As {@link #write}, with FP8/FP4 codes drawn eight bytes at a time: several times faster for benchmark
     * models of tens of GB, different values from {@link #write} (whose values the parity tests are tuned on).
     */
    public static void writeBulk(Shape s, Path dir) throws IOException {
        new SyntheticCheckpoint(s, false, true).writeTo(dir);
    }

    /**
     * The stable construction of the {@code dsv4-tiny-stable} fixture at any shape: BF16 linears and experts
     * (no quantization), router weights ten times larger (wide routing margins) and {@code indexTopk} as given
     * (choose it at least the compressed entries a test reaches, so the indexer keeps every entry): two
     * implementations that differ only in summation order then make the same discrete choices.
     */
    public static void writeStable(Shape s, Path dir) throws IOException {
        new SyntheticCheckpoint(s, true, false).writeTo(dir);
    }

    private void writeTo(Path dir) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("config.json"), config());
        SafetensorsWriter w = new SafetensorsWriter();
        int d = s.hidden();
        bf16(w, "embed.weight", 0.5f, s.vocab(), d);
        bf16(w, "head.weight", 0.05f, s.vocab(), d);
        ones(w, "norm.weight", d);
        f32(w, "hc_head_fn", 0.01f, 4, 4 * d);
        f32(w, "hc_head_base", 0f, 4);
        w.addF32("hc_head_scale", new int[]{1}, 1f);
        for (int l = 0; l < s.layers(); l++) {
            String p = "layers." + l + ".";
            int r = s.ratio(l);
            ones(w, p + "attn_norm.weight", d);
            ones(w, p + "ffn_norm.weight", d);
            ones(w, p + "attn.q_norm.weight", s.qLora());
            ones(w, p + "attn.kv_norm.weight", 512);
            f32(w, p + "attn.attn_sink", 0f, s.heads());
            fp8(w, p + "attn.wq_a", s.qLora(), d);
            fp8(w, p + "attn.wq_b", s.heads() * 512, s.qLora());
            fp8(w, p + "attn.wkv", 512, d);
            fp8(w, p + "attn.wo_a", s.oGroups() * s.oLora(), s.heads() * 512 / s.oGroups());
            fp8(w, p + "attn.wo_b", d, s.oGroups() * s.oLora());
            if (r > 0) {
                int coff = r == 4 ? 2 : 1;
                bf16(w, p + "attn.compressor.wkv.weight", 0.05f, coff * 512, d);
                bf16(w, p + "attn.compressor.wgate.weight", 0.05f, coff * 512, d);
                ones(w, p + "attn.compressor.norm.weight", 512);
                f32(w, p + "attn.compressor.ape", 0.1f, r, coff * 512);
            }
            if (r == 4) {
                fp8(w, p + "attn.indexer.wq_b", s.indexHeads() * 128, s.qLora());
                bf16(w, p + "attn.indexer.weights_proj.weight", 0.05f, s.indexHeads(), d);
                bf16(w, p + "attn.indexer.compressor.wkv.weight", 0.05f, 256, d);
                bf16(w, p + "attn.indexer.compressor.wgate.weight", 0.05f, 256, d);
                ones(w, p + "attn.indexer.compressor.norm.weight", 128);
                f32(w, p + "attn.indexer.compressor.ape", 0.1f, 4, 256);
            }
            for (String sub : List.of("attn", "ffn")) {
                f32(w, p + "hc_" + sub + "_fn", 0.01f, 24, 4 * d);
                f32(w, p + "hc_" + sub + "_base", 0.1f, 24);
                w.addF32(p + "hc_" + sub + "_scale", new int[]{3}, 1f, 1f, 1f);
            }
            bf16(w, p + "ffn.gate.weight", stable ? 0.5f : 0.05f, s.experts(), d);
            if (l < s.hashLayers()) {
                long[] ids = new long[s.vocab() * s.topk()];
                for (int t = 0; t < s.vocab(); t++) {
                    List<Long> pool = new ArrayList<>();
                    for (int e = 0; e < s.experts(); e++) {
                        pool.add((long) e);
                    }
                    for (int j = 0; j < s.topk(); j++) {
                        ids[t * s.topk() + j] = pool.remove(rnd.nextInt(pool.size()));
                    }
                }
                w.addI64(p + "ffn.gate.tid2eid", new int[]{s.vocab(), s.topk()}, ids);
            } else {
                f32(w, p + "ffn.gate.bias", 0f, s.experts());
            }
            fp8(w, p + "ffn.shared_experts.w1", s.inter(), d);
            fp8(w, p + "ffn.shared_experts.w2", d, s.inter());
            fp8(w, p + "ffn.shared_experts.w3", s.inter(), d);
            for (int e = 0; e < s.experts(); e++) {
                String ep = p + "ffn.experts." + e + ".";
                fp4(w, ep + "w1", s.inter(), d);
                fp4(w, ep + "w2", d, s.inter());
                fp4(w, ep + "w3", s.inter(), d);
            }
        }
        w.write(dir.resolve("model.safetensors"));
    }

    private String config() {
        StringBuilder ratios = new StringBuilder();
        // no multi-token-prediction layer: the server loads the directory as a complete checkpoint
        for (int l = 0; l < s.layers(); l++) {
            ratios.append(l > 0 ? ", " : "").append(s.ratio(l));
        }
        return """
            {"architectures": ["DeepseekV4ForCausalLM"], "model_type": "deepseek_v4", "vocab_size": %d,
             "hidden_size": %d, "num_hidden_layers": %d, "num_attention_heads": %d, "num_key_value_heads": 1,
             "head_dim": 512, "qk_rope_head_dim": 64, "q_lora_rank": %d, "o_groups": %d, "o_lora_rank": %d,
             "sliding_window": 128, "compress_ratios": [%s], "compress_rope_theta": 160000.0, "rope_theta": 10000.0,
             "rope_scaling": {"type": "yarn", "factor": 16, "original_max_position_embeddings": 65536,
                              "beta_fast": 32, "beta_slow": 1},
             "max_position_embeddings": 1048576, "index_n_heads": %d, "index_head_dim": 128, "index_topk": %d,
             "n_routed_experts": %d, "num_experts_per_tok": %d, "n_shared_experts": 1, "moe_intermediate_size": %d,
             "num_hash_layers": %d, "scoring_func": "sqrtsoftplus", "topk_method": "noaux_tc", "norm_topk_prob": true,
             "routed_scaling_factor": 1.5, "swiglu_limit": 10.0, "hidden_act": "silu", "hc_mult": 4,
             "hc_sinkhorn_iters": 20, "hc_eps": 1e-06, "num_nextn_predict_layers": 0, "rms_norm_eps": 1e-06,
             "bos_token_id": 0, "eos_token_id": 1, "tie_word_embeddings": false, "attention_bias": false,
             "attention_dropout": 0.0, "initializer_range": 0.02, "torch_dtype": "bfloat16", "use_cache": true%s}
            """.formatted(s.vocab(), s.hidden(), s.layers(), s.heads(), s.qLora(), s.oGroups(), s.oLora(), ratios,
            s.indexHeads(), s.indexTopk(), s.experts(), s.topk(), s.inter(), s.hashLayers(), stable ? "" : ", \"expert_dtype\": \"fp4\", \"quantization_config\": {\"quant_method\": \"fp8\","
                + " \"fmt\": \"e4m3\", \"scale_fmt\": \"ue8m0\", \"weight_block_size\": [128, 128],"
                + " \"activation_scheme\": \"dynamic\"}");
    }

    private void bf16(SafetensorsWriter w, String name, float std, int... shape) {
        int n = count(shape);
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (float) (rnd.nextDouble(-1, 1) * std);
        }
        w.addBf16(name, shape, v);
    }

    private void ones(SafetensorsWriter w, String name, int n) {
        float[] v = new float[n];
        java.util.Arrays.fill(v, 1f);
        w.addBf16(name, new int[]{n}, v);
    }

    private void f32(SafetensorsWriter w, String name, float std, int... shape) {
        int n = count(shape);
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (float) (rnd.nextDouble(-1, 1) * std);
        }
        w.addF32(name, shape, v);
    }

    /** Random e4m3 codes (never NaN) and ue8m0 scales around 2^-8; BF16 of the same spread when stable. */
    private void fp8(SafetensorsWriter w, String prefix, int out, int in) {
        if (stable) {
            bf16(w, prefix + ".weight", (float) (2 / Math.sqrt(in)), out, in);
            return;
        }
        byte[] q = new byte[out * in];
        if (bulk) {
            rnd.nextBytes(q);
            for (int i = 0; i < q.length; i++) {
                if ((q[i] & 0x7f) == 0x7f) {
                    q[i]--;
                }
            }
        } else {
            for (int i = 0; i < q.length; i++) {
                int b = rnd.nextInt(256);
                q[i] = (byte) ((b & 0x7f) == 0x7f ? b - 1 : b);
            }
        }
        w.add(prefix + ".weight", DType.F8_E4M3, new int[]{out, in}, q);
        int so = (out + 127) / 128;
        int si = (in + 127) / 128;
        byte[] sc = new byte[so * si];
        for (int i = 0; i < sc.length; i++) {
            sc[i] = (byte) (116 + rnd.nextInt(3));
        }
        w.add(prefix + ".scale", DType.F8_E8M0, new int[]{so, si}, sc);
    }

    private void fp4(SafetensorsWriter w, String prefix, int out, int in) {
        if (stable) {
            bf16(w, prefix + ".weight", (float) (2 / Math.sqrt(in)), out, in);
            return;
        }
        byte[] q = new byte[out * in / 2];
        if (bulk) {
            rnd.nextBytes(q);
        } else {
            for (int i = 0; i < q.length; i++) {
                q[i] = (byte) rnd.nextInt(256);
            }
        }
        w.add(prefix + ".weight", DType.I8, new int[]{out, in / 2}, q);
        byte[] sc = new byte[out * in / 32];
        for (int i = 0; i < sc.length; i++) {
            sc[i] = (byte) (118 + rnd.nextInt(3));
        }
        w.add(prefix + ".scale", DType.F8_E8M0, new int[]{out, in / 32}, sc);
    }

    private static int count(int[] shape) {
        int n = 1;
        for (int d : shape) {
            n *= d;
        }
        return n;
    }
}
