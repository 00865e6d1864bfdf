package io.strata.platform.planner;

import io.strata.kv.KvLayout;
import io.strata.kv.KvPrecision;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The capacity planner as JSON for the console: {@code GET /admin/api/capacity?model=flash&kv=fp8+fp4
 * &context=1048576&memoryGib=80&targetContext=131072}. Bad input gets a 400 naming the parameter.
 * Only bundled model names are accepted here, never file paths.
 */
@RestController
@RequestMapping("/admin/api/capacity")
public class CapacityController {

    @GetMapping
    public ResponseEntity<Map<String, Object>> capacity(@RequestParam(defaultValue = "flash") String model,
                                                        @RequestParam(defaultValue = "fp8+fp4") String kv,
                                                        @RequestParam(defaultValue = "1048576") String context,
                                                        @RequestParam(required = false) String memoryGib,
                                                        @RequestParam(required = false) String targetContext,
                                                        @RequestParam(defaultValue = "64") String align) {
        try {
            ModelChoice.Planned pm = ModelChoice.named(model);
            long ctx = positive("context", context);
            KvLayout layout = KvLayout.of(pm.shape(), KvPrecision.parse(kv), (int) positive("align", align));
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("model", pm.shape().modelId());
            body.put("kv", layout.precision().toString());
            body.put("alignment", layout.alignment());
            Map<String, Long> rows = new LinkedHashMap<>();
            layout.buckets().forEach(b -> rows.put(b.bucket().metricName(), b.rowBytes()));
            body.put("bucketRowBytes", rows);
            body.put("sequence", CapacityPlanner.sequence(layout, ctx));
            VllmReference v = VllmReference.of(pm.shape(), pm.trunkLayers(), 8192);
            body.put("vllm", Map.of("blockIdBytes", v.blockIdBytes(), "sequenceBytes", v.sequenceBytes(ctx),
                    "perRequestBytes", v.perRequestBytes(), "prefillTransientBytesPer8k", v.prefillTransientBytes()));
            if (memoryGib != null) {
                double gib = Double.parseDouble(memoryGib);
                if (!(gib > 0) || gib > 1e6) {
                    throw new IllegalArgumentException("memoryGib must be in (0, 1e6], got " + memoryGib);
                }
                long target = targetContext == null ? ctx : positive("targetContext", targetContext);
                body.put("fit", CapacityPlanner.fit(layout, ctx, (long) (gib * CapacityPlanner.GIB), target));
            }
            body.put("seeds", CapacityPlanner.seedsTable());
            return ResponseEntity.ok(body);
        } catch (IllegalArgumentException e) {
            return ResponseEntity.badRequest().body(Map.of("error", e.getMessage()));
        }
    }

    private static long positive(String name, String v) {
        long n;
        try {
            n = Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " expects an integer, got '" + v + "'");
        }
        if (n <= 0 || n > (1L << 40)) {
            throw new IllegalArgumentException(name + " must be in [1, 2^40], got " + v);
        }
        return n;
    }
}
