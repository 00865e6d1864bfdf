package io.strata.model.catalogue;

import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.checkpoint.Tensor;

/** The result of checking a checkpoint against its catalogue: every problem, not just the first. */
public record ValidationReport(String source, int expectedCount, int foundCount, List<CatalogueProblem> problems) {

    public ValidationReport {
        problems = List.copyOf(problems);
    }

    /** Compares names, dtypes and shapes; reads only headers, never tensor data. */
    public static ValidationReport check(WeightCatalogue catalogue, Checkpoint checkpoint) {
        var problems = new java.util.ArrayList<CatalogueProblem>();
        var present = checkpoint.tensors();
        for (TensorSpec spec : catalogue.specs().values()) {
            Tensor t = present.get(spec.name());
            String expected = spec.dtype() + spec.shape().toString();
            if (t == null) {
                problems.add(new CatalogueProblem(ProblemKind.MISSING, spec.name(), expected, "", ""));
            } else if (t.dtype() != spec.dtype()) {
                problems.add(new CatalogueProblem(ProblemKind.WRONG_DTYPE, spec.name(), expected, describe(t), t.file()));
            } else if (!t.hasShape(spec.shapeArray())) {
                problems.add(new CatalogueProblem(ProblemKind.WRONG_SHAPE, spec.name(), expected, describe(t), t.file()));
            }
        }
        for (Tensor t : present.values()) {
            if (catalogue.find(t.name()).isEmpty()) {
                problems.add(new CatalogueProblem(ProblemKind.UNEXPECTED, t.name(), "", describe(t), t.file()));
            }
        }
        return new ValidationReport(checkpoint.directory().toString(), catalogue.size(), present.size(), problems);
    }

    private static String describe(Tensor t) {
        return t.dtype() + Arrays.toString(t.shape());
    }

    public boolean isClean() {
        return problems.isEmpty();
    }

    public List<CatalogueProblem> problems(ProblemKind kind) {
        return problems.stream().filter(p -> p.kind() == kind).toList();
    }

    /** One line per problem, after a count summary. */
    public String summary() {
        if (isClean()) {
            return source + ": all " + expectedCount + " expected tensors present with the right dtype and shape";
        }
        var counts = Arrays.stream(ProblemKind.values()).filter(k -> !problems(k).isEmpty())
                .map(k -> problems(k).size() + " " + k.name().toLowerCase().replace('_', ' '))
                .collect(Collectors.joining(", "));
        return source + ": checkpoint does not match its config (" + counts + "; " + foundCount + " found, "
                + expectedCount + " expected):\n  " + problems.stream().map(CatalogueProblem::toString)
                .collect(Collectors.joining("\n  "));
    }

    /** Throws {@link CheckpointValidationException} listing every problem unless clean. */
    public ValidationReport requireClean() {
        if (!isClean()) {
            throw new CheckpointValidationException(this);
        }
        return this;
    }
}
