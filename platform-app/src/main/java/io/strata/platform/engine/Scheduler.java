package io.strata.platform.engine;

import io.strata.platform.engine.kv.KvCacheManager;
import io.strata.platform.engine.kv.KvRequest;
import io.strata.platform.engine.kv.PrefixMatch;

import java.util.ArrayDeque;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;

/**
 * Continuous batching in the manner of vLLM's v1 scheduler: there are no prefill and decode phases,
 * every sequence just catches its computed tokens up to its length. Running sequences are served
 * first (a decode costs one token of the budget, a prefill up to the rest of the budget, so long
 * prompts are chunked); waiting ones are admitted while budget, {@code max-num-seqs} and pages last,
 * unless something was preempted in this step. When pages run out, the newest running sequence (or
 * the lowest-priority one under the priority policy) is preempted: its pages are freed, its progress
 * forgotten, and it goes back to the front of the queue to be recomputed (its blocks stay cached, so
 * the recompute usually starts with a prefix hit). It talks to the {@link KvCacheManager} directly, with
 * each sequence's own {@link KvRequest}.
 */
final class Scheduler {
    private final KvCacheManager kv;
    private int tokenBudget;
    private int maxNumSeqs;
    private final boolean priority;
    private int chunkCap;
    private final Deque<Sequence> waiting = new ArrayDeque<>();
    private final List<Sequence> running = new ArrayList<>();
    private long preemptionsTotal;

    Scheduler(KvCacheManager kv, int tokenBudget, int maxNumSeqs, boolean priority, int chunkCap) {
        this.kv = kv;
        this.chunkCap = chunkCap > 0 ? chunkCap : Integer.MAX_VALUE;
        this.tokenBudget = tokenBudget;
        this.maxNumSeqs = maxNumSeqs;
        this.priority = priority;
    }

    /**
     * The step's plan: chunks to run, sequences preempted while planning it, and sequences the pools can
     * never hold (alone and still short of pages), which the engine fails instead of retrying forever.
     */
    record Plan(List<StepRunner.Chunk> chunks, List<Sequence> preempted, List<Sequence> unservable) {
        boolean isEmpty() {
            return chunks.isEmpty();
        }
    }

    void add(Sequence seq) {
        if (priority) {
            insertByPriority(seq);
        } else {
            waiting.addLast(seq);
        }
    }

    /** New limits from the next {@link #schedule()} on (engine thread only). */
    void limits(int tokenBudget, int maxNumSeqs, int chunkCap) {
        this.tokenBudget = tokenBudget;
        this.maxNumSeqs = maxNumSeqs;
        this.chunkCap = chunkCap > 0 ? chunkCap : Integer.MAX_VALUE;
    }

    int waitingCount() {
        return waiting.size();
    }

    int runningCount() {
        return running.size();
    }

    long preemptionsTotal() {
        return preemptionsTotal;
    }

    boolean idle() {
        return waiting.isEmpty() && running.isEmpty();
    }

    Iterable<Sequence> all() {
        List<Sequence> all = new ArrayList<>(running);
        all.addAll(waiting);
        return all;
    }

    /** Removes a sequence wherever it is and frees its pages. */
    void remove(Sequence seq) {
        if (!running.remove(seq)) {
            waiting.remove(seq);
        }
        kv.free(seq.kv);
    }

    Plan schedule() {
        int budget = tokenBudget;
        List<StepRunner.Chunk> chunks = new ArrayList<>();
        List<Sequence> preempted = new ArrayList<>();
        List<Sequence> unservable = new ArrayList<>();
        Set<Sequence> scheduled = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Sequence seq : new ArrayList<>(running)) {
            if (budget <= 0) {
                break;
            }
            if (seq.state() != KvRequest.State.RUNNING) {
                continue; // preempted earlier in this step
            }
            int numNew = Math.min(Math.min(seq.length() - seq.numComputed(), budget), chunkCap);
            if (numNew <= 0) {
                continue;
            }
            boolean ok = false;
            while (true) {
                if (kv.allocate(seq.kv, numNew)) {
                    ok = true;
                    break;
                }
                Sequence victim = victim(scheduled);
                if (victim == null) {
                    break;
                }
                if (victim == seq && scheduled.isEmpty() && running.size() == 1) {
                    // alone in the pools and still short: preempting would only loop
                    unservable.add(seq);
                    break;
                }
                preempt(victim);
                preempted.add(victim);
                if (victim == seq) {
                    break;
                }
            }
            if (ok) {
                chunks.add(chunk(seq, numNew));
                scheduled.add(seq);
                budget -= numNew;
            }
        }
        if (preempted.isEmpty()) {
            admit(budget, chunks, unservable);
        }
        // only now, with every chunk of the step holding its pages: what is left may keep boundary windows
        for (StepRunner.Chunk c : chunks) {
            if (c.count() > 1) {
                kv.cacheBoundaryWindows(c.seq().kv, c.count());
            }
        }
        return new Plan(chunks, preempted, unservable);
    }

    private void admit(int budget, List<StepRunner.Chunk> chunks, List<Sequence> unservable) {
        while (budget > 0 && !waiting.isEmpty() && running.size() < maxNumSeqs) {
            Sequence seq = waiting.peekFirst();
            PrefixMatch hit = kv.match(seq.kv, seq.logitsNeededFrom());
            if (!kv.canAdmit(seq.kv, hit)) {
                if (running.isEmpty() && chunks.isEmpty()) {
                    // empty pools and it still does not fit
                    waiting.pollFirst();
                    unservable.add(seq);
                    continue;
                }
                break; // FCFS: nobody overtakes the head of the queue
            }
            kv.admit(seq.kv, hit);
            if (!seq.admittedOnce) {
                seq.cachedTokens = Math.toIntExact(hit.computeFrom());
            }
            int numNew = Math.min(Math.min(seq.length() - seq.numComputed(), budget), chunkCap);
            if (!kv.allocate(seq.kv, numNew)) {
                kv.unadmit(seq.kv);
                break;
            }
            waiting.pollFirst();
            seq.admittedOnce = true;
            if (seq.firstScheduledNanos == 0) {
                seq.firstScheduledNanos = System.nanoTime();
            }
            running.add(seq);
            chunks.add(chunk(seq, numNew));
            budget -= numNew;
        }
    }

    private StepRunner.Chunk chunk(Sequence seq, int numNew) {
        boolean ends = seq.numComputed() + numNew == seq.length();
        StepRunner.LogitsWanted wanted = seq.wantsPromptLogprobs() ? StepRunner.LogitsWanted.ALL
                : ends ? StepRunner.LogitsWanted.LAST : StepRunner.LogitsWanted.NONE;
        return new StepRunner.Chunk(seq, seq.numComputed(), numNew, wanted);
    }

    /** Newest running sequence not yet in this step (vLLM pops the last admitted); by priority when on. */
    private Sequence victim(Set<Sequence> scheduled) {
        Comparator<Sequence> order = priority
                ? Comparator.<Sequence>comparingInt(s -> s.priority).thenComparingLong(s -> s.seqNo)
                : Comparator.comparingLong(s -> s.seqNo);
        Sequence best = null;
        for (Sequence s : running) {
            if (scheduled.contains(s)) {
                continue;
            }
            if (best == null || order.compare(s, best) > 0) {
                best = s;
            }
        }
        return best;
    }

    private void preempt(Sequence seq) {
        running.remove(seq);
        kv.preempt(seq.kv);
        preemptionsTotal++;
        if (seq.promptLogprobs != null && seq.promptLogprobs.size() < seq.promptLength) {
            seq.promptLogprobs.subList(1, seq.promptLogprobs.size()).clear();
        }
        if (priority) {
            insertByPriority(seq);
        } else {
            waiting.addFirst(seq);
        }
    }

    private void insertByPriority(Sequence seq) {
        // stable: lower priority value first, then arrival order
        List<Sequence> tmp = new ArrayList<>(waiting);
        int at = 0;
        while (at < tmp.size() && (tmp.get(at).priority < seq.priority
                || (tmp.get(at).priority == seq.priority && tmp.get(at).seqNo < seq.seqNo))) {
            at++;
        }
        tmp.add(at, seq);
        waiting.clear();
        waiting.addAll(tmp);
    }

    /** Marks the planned tokens computed (called after the step succeeded). */
    void advance(StepRunner.Chunk c) {
        kv.commit(c.seq().kv, c.count());
    }
}
