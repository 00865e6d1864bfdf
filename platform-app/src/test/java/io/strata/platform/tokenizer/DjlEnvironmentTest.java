package io.strata.platform.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;

import org.junit.jupiter.api.Test;

class DjlEnvironmentTest {

    @Test
    void setsOfflineTrackingAndCacheSwitchesWhenNothingIsSet() {
        Properties p = new Properties();
        assertFalse(DjlEnvironment.isOfflineAndUntracked(name -> null, p));
        DjlEnvironment.prepare(Path.of("/tmp/djl"), name -> null, p);
        assertEquals("true", p.getProperty("OPT_OUT_TRACKING"));
        assertEquals("true", p.getProperty("ai.djl.offline"));
        assertEquals("/tmp/djl", p.getProperty("DJL_CACHE_DIR"));
        assertTrue(DjlEnvironment.isOfflineAndUntracked(name -> null, p));
    }

    @Test
    void leavesOperatorSettingsAlone() {
        Map<String, String> env = Map.of("DJL_CACHE_DIR", "/opt/djl", "DJL_OFFLINE", "true");
        Properties p = new Properties();
        p.setProperty("OPT_OUT_TRACKING", "true");
        DjlEnvironment.prepare(Path.of("/tmp/djl"), env::get, p);
        assertNull(p.getProperty("DJL_CACHE_DIR"), "the environment's cache dir wins");
        assertNull(p.getProperty("ai.djl.offline"), "already offline through the environment");
        assertTrue(DjlEnvironment.isOfflineAndUntracked(env::get, p));
        DjlEnvironment.prepare(null, name -> null, p);
        assertNull(p.getProperty("DJL_CACHE_DIR"), "null keeps DJL's default");
    }
}
