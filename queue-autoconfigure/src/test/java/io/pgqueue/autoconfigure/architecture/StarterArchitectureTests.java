package io.pgqueue.autoconfigure.architecture;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The starter is built on the core's public API only: nothing in {@code io.pgqueue.autoconfigure}
 * depends on the engine ({@code io.pgqueue.internal}), which may change in any release.
 */
class StarterArchitectureTests {

    @Test
    void theStarterUsesNoEngineType() {
        JavaClasses starter = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.pgqueue.autoconfigure");
        noClasses().should().dependOnClassesThat().resideInAPackage("io.pgqueue.internal..").check(starter);
    }
}
