package io.strata.platform.engine;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The choices in flight by request id, so the console can abort one from any thread. Abort goes through the
 * same path as a client disconnect. What the choices look like is in the {@link EngineSnapshot}s the engine
 * thread publishes, not here.
 */
final class LiveSequences {

    private record Entry(String requestId, InferenceEngine.Submission submission) {
    }

    private final ConcurrentHashMap<Long, Entry> live = new ConcurrentHashMap<>();

    void add(Sequence seq, InferenceEngine.Submission submission) {
        live.put(seq.seqNo, new Entry(seq.id, submission));
    }

    void remove(Sequence seq) {
        live.remove(seq.seqNo);
    }

    int size() {
        return live.size();
    }

    /** Aborts every in-flight choice with this request id; false when none is in flight. */
    boolean abort(String requestId) {
        boolean found = false;
        for (Entry e : live.values()) {
            if (e.requestId().equals(requestId)) {
                e.submission().abort();
                found = true;
            }
        }
        return found;
    }
}
