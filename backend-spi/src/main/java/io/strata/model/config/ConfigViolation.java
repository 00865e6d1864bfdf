package io.strata.model.config;

/**
 * One broken rule in a model config.
 *
 * @param key  the JSON key (dotted for nested keys, e.g. {@code rope_scaling.factor})
 * @param rule what the value must satisfy, phrased for an operator
 */
public record ConfigViolation(String key, String rule) {
    @Override
    public String toString() {
        return "'" + key + "': " + rule;
    }
}
