package io.strata.model.config;

import java.util.List;
import java.util.stream.Collectors;

/**
 * A {@code config.json} that does not describe a model Strata can run. Carries every violated rule,
 * not only the first, so one round of fixing is enough.
 */
public final class InvalidConfigException extends IllegalArgumentException {

    private final String source;
    private final List<ConfigViolation> violations;

    public InvalidConfigException(String source, List<ConfigViolation> violations) {
        super(describe(source, violations));
        this.source = source;
        this.violations = List.copyOf(violations);
    }

    public InvalidConfigException(String source, String key, String rule) {
        this(source, List.of(new ConfigViolation(key, rule)));
    }

    /** Where the config came from (a path or a resource name). */
    public String source() {
        return source;
    }

    public List<ConfigViolation> violations() {
        return violations;
    }

    private static String describe(String source, List<ConfigViolation> violations) {
        return "Invalid model config " + source + ": " + violations.size() + " problem(s): "
                + violations.stream().map(ConfigViolation::toString).collect(Collectors.joining("; "));
    }
}
