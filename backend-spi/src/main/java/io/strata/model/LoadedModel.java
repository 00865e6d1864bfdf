package io.strata.model;

import java.nio.file.Path;
import java.util.Optional;

import io.strata.model.catalogue.ValidationReport;
import io.strata.model.catalogue.WeightCatalogue;
import io.strata.model.checkpoint.Checkpoint;
import io.strata.model.checkpoint.Tensor;
import io.strata.model.config.LayerSchedule;
import io.strata.model.config.ModelConfig;
import io.strata.model.weights.WeightMatrix;

/**
 * A model directory opened and validated by {@link ModelLoader}: its config, layer schedule and memory-mapped
 * tensors. Closing it unmaps the weights; tensors obtained from it must not be used afterwards (they throw).
 */
public final class LoadedModel implements AutoCloseable {

    private final Path directory;
    private final ModelConfig config;
    private final LayerSchedule schedule;
    private final WeightCatalogue catalogue;
    private final Checkpoint checkpoint;
    private final ValidationReport validation;

    LoadedModel(Path directory, ModelConfig config, WeightCatalogue catalogue, Checkpoint checkpoint,
                ValidationReport validation) {
        this.directory = directory;
        this.config = config;
        this.schedule = config.schedule();
        this.catalogue = catalogue;
        this.checkpoint = checkpoint;
        this.validation = validation;
    }

    public Path directory() {
        return directory;
    }

    public ModelConfig config() {
        return config;
    }

    public LayerSchedule schedule() {
        return schedule;
    }

    public WeightCatalogue catalogue() {
        return catalogue;
    }

    public Checkpoint checkpoint() {
        return checkpoint;
    }

    /** The (clean) validation that let the model load. */
    public ValidationReport validation() {
        return validation;
    }

    /** A tensor by its full checkpoint name; throws naming it if absent. */
    public Tensor tensor(String name) {
        return checkpoint.tensor(name);
    }

    public Optional<Tensor> find(String name) {
        return checkpoint.find(name);
    }

    /**
     * A linear weight by module name (without {@code .weight}), with its {@code .scale} when the checkpoint
     * stores one, e.g. {@code linear("layers.0.attn.wq_a")}.
     */
    public WeightMatrix linear(String module) {
        return WeightMatrix.of(checkpoint.tensor(module + ".weight"), checkpoint.find(module + ".scale").orElse(null));
    }

    /** The tensors of trunk layer or MTP block {@code index} (schedule numbering: MTP k = n_layers + k). */
    public LayerWeights layer(int index) {
        return new LayerWeights(schedule.layer(index), this);
    }

    @Override
    public void close() {
        checkpoint.close();
    }

    @Override
    public String toString() {
        return "LoadedModel[" + directory + ", " + config.numHiddenLayers() + " layers + "
                + config.numNextnPredictLayers() + " MTP, " + checkpoint.size() + " tensors]";
    }
}
