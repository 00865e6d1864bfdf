package io.strata.platform.engine;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Attention data-parallel ranks behind one engine: each rank is a {@link ServingEngine} with its own
 * executor, KV manager and loop; a new choice goes to the rank the {@link RankRouter} picks from the ranks'
 * published {@link RankView}s, and stays there for its life. Routing is serialised, so each decision sees
 * the prompt tokens the previous ones queued (a burst spreads before any rank has stepped). Everything else
 * fans out (abort, limits, close) or merges what the ranks published ({@link RankSnapshots}).
 */
public final class DataParallelEngine implements InferenceEngine, TunableEngine {

    private final List<ServingEngine> ranks;
    private final RankRouter router;
    private final Object routing = new Object();

    public DataParallelEngine(List<ServingEngine> ranks, RankRouter router) {
        if (ranks.size() < 2) {
            throw new IllegalArgumentException("data-parallel serving needs at least two ranks, got " + ranks.size());
        }
        this.ranks = List.copyOf(ranks);
        this.router = router;
    }

    @Override
    public ModelCard model() {
        return ranks.getFirst().model();
    }

    @Override
    public TextCodec codec() {
        return ranks.getFirst().codec();
    }

    @Override
    public Submission submit(GenerationRequest request) {
        synchronized (routing) {
            RankRouter.Choice choice = router.choose(views(), request.promptTokens(), request.cacheSalt());
            return ranks.get(choice.rank()).submit(request);
        }
    }

    /** Up when every rank is; otherwise the first rank that is not, with its reason. */
    @Override
    public EngineStatus status() {
        for (ServingEngine r : ranks) {
            EngineStatus s = r.status();
            if (!s.up()) {
                return new EngineStatus(false, "rank " + r.rank().index() + ": " + s.detail());
            }
        }
        return new EngineStatus(true, "");
    }

    @Override
    public Optional<EngineSnapshot> snapshot() {
        List<EngineSnapshot> all = new ArrayList<>(ranks.size());
        for (ServingEngine r : ranks) {
            r.snapshot().ifPresent(all::add);
        }
        return Optional.of(RankSnapshots.merge(all));
    }

    @Override
    public List<RankLoad> rankLoads() {
        List<RankLoad> out = new ArrayList<>(ranks.size());
        for (ServingEngine r : ranks) {
            out.addAll(r.rankLoads());
        }
        return out;
    }

    /** The ranks' views, in rank order (any thread). */
    public List<RankView> views() {
        List<RankView> out = new ArrayList<>(ranks.size());
        for (ServingEngine r : ranks) {
            out.add(r.rankView());
        }
        return out;
    }

    /** The rank engines, in rank order. */
    public List<ServingEngine> ranks() {
        return ranks;
    }

    /** Aborts the request's choices on every rank (a request's choices may sit on different ranks). */
    @Override
    public boolean abort(String requestId) {
        boolean any = false;
        for (ServingEngine r : ranks) {
            any |= r.abort(requestId);
        }
        return any;
    }

    @Override
    public EngineProperties limits() {
        return ranks.getFirst().limits();
    }

    /** Applies the limits to every rank: each rank's scheduler and queue has them on its own. */
    @Override
    public void applyLimits(EngineProperties newLimits) {
        for (ServingEngine r : ranks) {
            r.applyLimits(newLimits);
        }
    }

    @Override
    public void close() throws Exception {
        Exception first = null;
        for (ServingEngine r : ranks) {
            try {
                r.close();
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
