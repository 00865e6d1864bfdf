package io.strata.backend.cpu.model;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/** A test class that runs against one bundled checkpoint and its reference tensors, opened once per class. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class FixtureTest {
    private final String checkpoint;
    Fixture fx;

    FixtureTest(String checkpoint) {
        this.checkpoint = checkpoint;
    }

    @BeforeAll
    void openFixture() throws Exception {
        fx = Fixture.open(checkpoint);
    }

    @AfterAll
    void closeFixture() {
        if (fx != null) {
            fx.close();
        }
    }
}
