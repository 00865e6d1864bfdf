package io.strata.platform.workers;

import io.strata.kv.KvLayout;
import io.strata.kv.KvModelShape;
import io.strata.kv.KvPrecision;
import io.strata.spi.exec.ModelExecutor;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Optional;

/**
 * The worker's side of {@link WorkerProtocol}: answers the platform's requests with one {@link ModelExecutor}
 * until {@link WorkerProtocol#CLOSE} or until the platform goes away (end of channel).
 */
final class WorkerServer {
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private final ModelExecutor executor;
    private final String modelId;
    private final FrameChannel channel;

    WorkerServer(ModelExecutor executor, String modelId, FrameChannel channel) {
        this.executor = executor;
        this.modelId = modelId;
        this.channel = channel;
    }

    /** Says hello, then serves; returns when the platform closes the worker or the channel. */
    void serve() throws IOException {
        Payload hello = new Payload().putLong(executor.weightBytes());
        WorkerProtocol.putCapabilities(hello, executor.capabilities());
        channel.send(WorkerProtocol.HELLO, hello.done());
        while (true) {
            FrameChannel.Frame request;
            try {
                request = channel.receive();
            } catch (EOFException e) {
                return;
            }
            ByteBuffer reply;
            try {
                reply = answer(request);
            } catch (RuntimeException e) {
                channel.send(WorkerProtocol.ERROR, WorkerProtocol.error(e));
                continue;
            }
            channel.send(request.type(), reply);
            if (request.type() == WorkerProtocol.CLOSE) {
                return;
            }
        }
    }

    private ByteBuffer answer(FrameChannel.Frame request) {
        ByteBuffer body = request.body();
        return switch (request.type()) {
            case WorkerProtocol.EXECUTE -> WorkerProtocol.result(executor.execute(WorkerProtocol.batch(body)));
            case WorkerProtocol.ALLOCATE_KV -> {
                KvPrecision precision = KvPrecision.parse(Payload.string(body));
                KvLayout layout = KvLayout.of(KvModelShape.of(modelId, executor.config()), precision);
                yield WorkerProtocol.poolsReply(executor.allocateKv(layout, WorkerProtocol.allocatePages(body)));
            }
            case WorkerProtocol.CAPABILITIES -> {
                Payload p = new Payload();
                WorkerProtocol.putCapabilities(p, executor.capabilities());
                yield p.done();
            }
            case WorkerProtocol.DEVICE_MEMORY -> {
                Optional<io.strata.spi.exec.DeviceMemory> m = executor.deviceMemory();
                Payload p = new Payload().putBoolean(m.isPresent());
                m.ifPresent(d -> WorkerProtocol.putDeviceMemory(p, d));
                yield p.done();
            }
            case WorkerProtocol.CLOSE -> EMPTY;
            default -> throw new IllegalStateException("unknown request type " + request.type());
        };
    }
}
