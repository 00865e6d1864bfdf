package io.strata.backend.cuda.model;

import io.strata.kv.PageBucket;
import io.strata.spi.exec.BlockTable;
import io.strata.spi.exec.ModelExecutor;
import io.strata.spi.exec.SequenceChunk;
import io.strata.spi.exec.StepBatch;
import io.strata.spi.exec.StepResult;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Drives requests through an executor the way the engine does — prompt chunks, then one token per step
 * (teacher forcing), several requests per step — with block tables from a {@code PageAllocator}, so the
 * same schedule can run on the CPU and on the GPU and their logits be compared row by row.
 */
final class Schedule {
    /** Pages per bucket each executor's pools get in these tests. */
    static final Map<PageBucket, Integer> POOL = Map.of(PageBucket.LARGE, 1200, PageBucket.MIDDLE, 4000,
        PageBucket.SMALL, 6000);

    /** One request: its tokens, prompt length, chunking, tables, progress and the logits collected. */
    static final class Request {
        final long id;
        final int[] tokens;
        final int prompt;
        final int chunk;
        final int[][] tables;
        int done;
        int sharedPrefix;
        int windowFloor;
        /** Decode rows ask for their argmax only (a greedy request); the prompt's last row still comes back whole. */
        boolean argmaxOnly;
        final List<float[]> logits = new ArrayList<>();
        /** The tokens of the rows that came back as their argmax. */
        final List<Integer> argmax = new ArrayList<>();

        Request(long id, int[] tokens, int prompt, int chunk, int[][] tables) {
            this.id = id;
            this.tokens = tokens;
            this.prompt = prompt;
            this.chunk = chunk;
            this.tables = tables;
        }

        boolean finished() {
            return done >= tokens.length;
        }

        SequenceChunk next() {
            int len = done < prompt ? Math.min(chunk, prompt - done) : 1;
            int[] t = Arrays.copyOfRange(tokens, done, done + len);
            boolean wantLogits = done + len >= prompt;
            return new SequenceChunk(id, t, done, BlockTable.fromZero(tables), sharedPrefix, Math.min(windowFloor, done),
                wantLogits ? new int[] {len - 1} : new int[0], argmaxOnly && done >= prompt);
        }

        /** Logits of the last prompt position, then of every decoded position: rows × vocab. */
        float[] collected(int vocab) {
            float[] out = new float[logits.size() * vocab];
            for (int j = 0; j < logits.size(); j++) {
                System.arraycopy(logits.get(j), 0, out, j * vocab, vocab);
            }
            return out;
        }
    }

    private Schedule() {
    }

    /** Runs the requests to the end, all unfinished ones in every step. */
    static void run(ModelExecutor exec, List<Request> requests) {
        while (requests.stream().anyMatch(r -> !r.finished())) {
            List<Request> active = requests.stream().filter(r -> !r.finished()).toList();
            List<SequenceChunk> chunks = active.stream().map(Request::next).toList();
            StepResult res = exec.execute(new StepBatch(chunks));
            for (int i = 0; i < active.size(); i++) {
                Request r = active.get(i);
                r.done += chunks.get(i).tokens().length;
                if (chunks.get(i).logitRows().length > 0) {
                    int token = res.tokens()[res.rowStart()[i]];
                    if (token >= 0) {
                        r.argmax.add(token);
                    } else {
                        r.logits.add(res.row(i, 0));
                    }
                }
            }
        }
    }
}
