package io.strata.platform.engine;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The engine's choices in flight, readable from any thread, for the admin console's Requests page.
 * A view reads the engine thread's plain fields without locking, so while the engine is busy a count
 * can be one step behind; that is fine for a display refreshed every second and keeps the engine loop
 * free of any console work. Abort goes through the same path as a client disconnect.
 */
public final class LiveSequences {

    /**
     * One choice as the console shows it.
     *
     * @param phase    {@code waiting}, {@code preempted} (waiting to be recomputed), {@code prefill} or {@code decode}
     * @param computed positions whose KV is written
     * @param kvState  the KV cache's per-sequence state (block tables), for page counts; may be null
     */
    public record View(String id, String phase, int promptTokens, int cachedTokens, int generatedTokens, int computed,
                       int preemptions, long ageNanos, Object kvState) {
    }

    private record Entry(Sequence seq, InferenceEngine.Submission submission) {
    }

    private final ConcurrentHashMap<Long, Entry> live = new ConcurrentHashMap<>();

    void add(Sequence seq, InferenceEngine.Submission submission) {
        live.put(seq.seqNo, new Entry(seq, submission));
    }

    void remove(Sequence seq) {
        live.remove(seq.seqNo);
    }

    public int size() {
        return live.size();
    }

    /** Every choice queued or running, oldest first. */
    public List<View> snapshot() {
        long now = System.nanoTime();
        List<Entry> entries = new ArrayList<>(live.values());
        entries.sort(Comparator.comparingLong(e -> e.seq().seqNo));
        List<View> out = new ArrayList<>(entries.size());
        for (Entry e : entries) {
            Sequence s = e.seq();
            Sequence.Status status = s.status;
            int computed = s.numComputed;
            String phase = switch (status) {
                case WAITING -> s.preemptions > 0 ? "preempted" : "waiting";
                case RUNNING -> computed < s.promptLength ? "prefill" : "decode";
                case FINISHED -> "finishing";
            };
            out.add(new View(s.id, phase, s.promptLength, Math.max(0, s.cachedTokens), Math.max(0, s.outputLength()),
                    computed, s.preemptions, now - s.arrivalNanos, s.kvState));
        }
        return out;
    }

    /** Aborts every in-flight choice with this request id; false when none is in flight. */
    public boolean abort(String requestId) {
        boolean found = false;
        for (Entry e : live.values()) {
            if (e.seq().id.equals(requestId)) {
                e.submission().abort();
                found = true;
            }
        }
        return found;
    }
}
