package io.strata.platform.plugins;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Plugins compile against backend-spi alone and get Spring nowhere: the SPI must not reach into
 * Spring or into the platform, or a vendor plugin would drag the application into its class loader.
 */
class SpiBoundaryTest {

    @Test
    void theBackendSpiDependsOnNeitherSpringNorThePlatform() {
        JavaClasses spi = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.strata.spi", "io.strata.model", "io.strata.kv");
        assertThat(spi).isNotEmpty();

        noClasses().should().dependOnClassesThat()
                .resideInAnyPackage("org.springframework..", "io.strata.platform..", "reactor..", "jakarta.servlet..")
                .because("backend-spi is the plugin contract and must stay free of the application and Spring")
                .check(spi);
    }
}
