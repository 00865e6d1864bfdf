"""Hand-checked numbers for v4_roofline (pure Python): python3 backend-cuda/bench/test_v4_roofline.py"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from v4_roofline import (FLASH, OURS, PEER_BF16, expected_distinct_experts, expert_bytes,  # noqa: E402
                         flash_ratios, roofline_ms, step_bytes)


class RooflineTest(unittest.TestCase):
    def test_schedule(self):
        self.assertEqual(flash_ratios(8), [0, 0, 4, 128, 4, 128, 4, 128])
        self.assertEqual(len(FLASH["compress_ratios"]), 44)

    def test_distinct_experts(self):
        self.assertAlmostEqual(expected_distinct_experts(1), 6.0)
        # 256 * (1 - (250/256)^8) = 256 * (1 - exp(8 * -0.0237165)) = 44.2418
        self.assertAlmostEqual(expected_distinct_experts(8), 44.2418, places=3)
        self.assertLess(expected_distinct_experts(256), 256)
        self.assertGreater(expected_distinct_experts(256), 255)

    def test_head(self):
        # bf16 129280 x 4096, hc_head_fn fp32 4 x 16384 + base 4 + scale 1, norm fp32 4096
        with_head = step_bytes(1, 8192, [0], FLASH, OURS, head=True)
        without = step_bytes(1, 8192, [0], FLASH, OURS)
        self.assertEqual(with_head["weights_head"], 129280 * 4096 * 2 + (65536 + 5) * 4 + 4096 * 4)
        self.assertEqual(with_head["total"] - without["total"], with_head["weights_head"])
        self.assertEqual(without["weights_head"], 0)

    def test_expert_bytes(self):
        # w1, w3: 2048 x 4096 / 2 bytes + 2048 x 128 scales; w2: 4096 x 2048 / 2 + 4096 x 64
        self.assertEqual(expert_bytes(FLASH, OURS), 2 * (4194304 + 262144) + 4194304 + 262144)
        self.assertEqual(expert_bytes(FLASH, OURS), 13369344)

    def test_kv_one_sequence(self):
        c = step_bytes(1, 8192, [0], FLASH, OURS)
        self.assertEqual(c["kv_window"], 128 * 584)
        self.assertEqual(c["kv_compressed"] + c["kv_indexer_keys"], 0)
        c = step_bytes(1, 8192, [4], FLASH, OURS)
        self.assertEqual(c["kv_compressed"], 512 * 584)          # top-512 of 2048
        self.assertEqual(c["kv_indexer_keys"], 2048 * 68)
        c = step_bytes(1, 1024, [4], FLASH, OURS)
        self.assertEqual(c["kv_compressed"], 256 * 584)          # fewer entries than top-k
        c = step_bytes(1, 8192, [128], FLASH, OURS)
        self.assertEqual(c["kv_compressed"], 64 * 584)
        self.assertEqual(c["kv_indexer_keys"], 0)
        p = step_bytes(1, 8192, [4], FLASH, PEER_BF16)
        self.assertEqual(p["kv_compressed"], 512 * 1024)
        self.assertEqual(p["kv_indexer_keys"], 2048 * 256)

    def test_kv_scales_with_batch_weights_do_not(self):
        a, b = step_bytes(1, 32768, flash_ratios(8)), step_bytes(4, 32768, flash_ratios(8))
        self.assertEqual(b["kv"], 4 * a["kv"])
        self.assertEqual(b["weights_attn"], a["weights_attn"])

    def test_attention_weights_swa_layer(self):
        c = step_bytes(1, 8192, [0], FLASH, OURS)
        wq_a = 1024 * 4096 + 8 * 32
        wq_b = 32768 * 1024 + 256 * 8
        wkv = 512 * 4096 + 4 * 32
        wo_a = 8192 * 4096 + 64 * 32
        wo_b = 4096 * 8192 + 32 * 64
        small = (1024 + 512 + 64) * 4
        self.assertEqual(c["weights_attn"], wq_a + wq_b + wkv + wo_a + wo_b + small)
        self.assertEqual(c["weights_compressor"], 0)
        self.assertEqual(c["weights_routed_experts"], 6 * 13369344)
        p = step_bytes(1, 8192, [0], FLASH, PEER_BF16)
        # wo_a bf16 instead of FP8 + 1-byte scales; the other four FP8 scales 4 bytes instead of 1
        self.assertEqual(p["weights_attn"] - c["weights_attn"],
                         8192 * 4096 - 64 * 32 + 3 * (8 * 32 + 256 * 8 + 4 * 32 + 32 * 64))

    def test_roofline(self):
        self.assertAlmostEqual(roofline_ms(4.25e9, 4250.0), 1.0)

    def test_totals_add_up(self):
        c = step_bytes(64, 131072, flash_ratios(8))
        parts = [k for k in c if k.startswith(("weights_", "kv_", "compressor_state"))]
        self.assertAlmostEqual(c["total"], sum(c[k] for k in parts))


if __name__ == "__main__":
    unittest.main(verbosity=2)
