package io.strata.platform.engine;

/** An engine whose queue and scheduler limits the console can read and change while it serves. */
public interface TunableEngine {

    /** The limits in force. */
    EngineProperties limits();

    /** Applies new limits; the scheduling policy cannot change while serving. */
    void applyLimits(EngineProperties newLimits);
}
