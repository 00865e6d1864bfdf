package io.strata.model.catalogue;

/**
 * One discrepancy between a checkpoint and its catalogue.
 *
 * @param kind     what is wrong
 * @param tensor   the tensor's name
 * @param expected what the config implies ({@code dtype[shape]}), empty for {@link ProblemKind#UNEXPECTED}
 * @param actual   what the checkpoint holds, empty for {@link ProblemKind#MISSING}
 * @param file     the safetensors file holding it, empty for {@link ProblemKind#MISSING}
 */
public record CatalogueProblem(ProblemKind kind, String tensor, String expected, String actual, String file) {

    @Override
    public String toString() {
        return switch (kind) {
            case MISSING -> "missing " + tensor + " (expected " + expected + ")";
            case UNEXPECTED -> "unexpected " + tensor + " " + actual + " in " + file;
            case WRONG_DTYPE -> "wrong dtype for " + tensor + ": expected " + expected + ", found " + actual + " in " + file;
            case WRONG_SHAPE -> "wrong shape for " + tensor + ": expected " + expected + ", found " + actual + " in " + file;
        };
    }
}
