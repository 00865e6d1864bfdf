package io.strata.platform.workers;

import io.strata.platform.engine.ServingBackend;

import java.util.function.Predicate;

/** Waiting, in tests, for what the platform reports of a worker process. */
final class WorkerStates {

    private WorkerStates() {
    }

    /** The worker's state once {@code done} holds, polled every 50 ms for up to a minute. */
    static WorkerState await(ServingBackend serving, String worker, Predicate<WorkerState> done, String what) {
        for (int i = 0; i < 1200; i++) {
            WorkerState s = serving.worker(worker).orElseThrow();
            if (done.test(s)) {
                return s;
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
        throw new AssertionError(worker + " was not " + what + ": " + serving.worker(worker).orElseThrow().summary());
    }

    /** The worker once it runs with a pid other than {@code oldPid} (0: any). */
    static WorkerState awaitRunning(ServingBackend serving, String worker, long oldPid) {
        return await(serving, worker, s -> s.state().equals("running") && s.pid() != oldPid && s.pid() > 0,
                "running (a process other than pid " + oldPid + ")");
    }
}
