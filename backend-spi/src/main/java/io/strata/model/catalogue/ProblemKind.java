package io.strata.model.catalogue;

/** How a checkpoint departs from its catalogue. */
public enum ProblemKind {
    /** Expected but absent. */
    MISSING,
    /** Present but not expected for this config. */
    UNEXPECTED,
    /** Present with the wrong dtype. */
    WRONG_DTYPE,
    /** Present with the wrong shape. */
    WRONG_SHAPE
}
