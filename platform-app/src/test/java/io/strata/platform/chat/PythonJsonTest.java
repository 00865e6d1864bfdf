package io.strata.platform.chat;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

class PythonJsonTest {

    @Test
    void floatsLikePythonRepr() {
        assertEquals("1.0", PythonJson.floatRepr(1.0));
        assertEquals("0.1", PythonJson.floatRepr(0.1));
        assertEquals("-2.5", PythonJson.floatRepr(-2.5));
        assertEquals("100.0", PythonJson.floatRepr(100.0));
        assertEquals("0.0001", PythonJson.floatRepr(0.0001));
        assertEquals("1e-05", PythonJson.floatRepr(0.00001));
        assertEquals("1.5e-07", PythonJson.floatRepr(1.5e-7));
        assertEquals("1000000000000000.0", PythonJson.floatRepr(1e15));
        assertEquals("1e+16", PythonJson.floatRepr(1e16));
        assertEquals("1.2345678901234568e+17", PythonJson.floatRepr(123456789012345678.0));
        assertEquals("1.5e+300", PythonJson.floatRepr(1.5e300));
        assertEquals("5e-324", PythonJson.floatRepr(Double.MIN_VALUE));
        assertEquals("0.30000000000000004", PythonJson.floatRepr(0.1 + 0.2));
        assertEquals("-0.0", PythonJson.floatRepr(-0.0));
        assertEquals("1e+23", PythonJson.floatRepr(1e23));
        assertEquals("2e-05", PythonJson.floatRepr(2e-5));
        assertEquals("9.5", PythonJson.floatRepr(9.5));
        assertEquals("1.7976931348623157e+308", PythonJson.floatRepr(Double.MAX_VALUE));
    }

    @Test
    void dumpsWithPythonSeparatorsAndRawUnicode() {
        var node = JsonMapper.shared().readTree(
                "{\"b\": 1, \"a\": [true, null, 2.50, \"é\\u4e2d\\n\\\"q\\\"\\u0001\"], \"big\": 123456789012345678901234567890, \"o\": {}}");
        assertEquals("{\"b\": 1, \"a\": [true, null, 2.5, \"é中\\n\\\"q\\\"\\u0001\"], \"big\": 123456789012345678901234567890, \"o\": {}}",
                PythonJson.dumps(node));
    }
}
