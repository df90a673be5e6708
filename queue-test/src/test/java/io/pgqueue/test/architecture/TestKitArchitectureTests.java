package io.pgqueue.test.architecture;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The test kit is built on the core's public API only: it runs jobs through
 * {@code PgQueue.testSupport}, never through the engine ({@code io.pgqueue.internal}) itself, and
 * writes no SQL of its own.
 */
class TestKitArchitectureTests {

    private static final JavaClasses TEST_KIT = new ClassFileImporter()
        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
        .importPackages("io.pgqueue.test");

    @Test
    void theTestKitUsesNoEngineType() {
        noClasses().should().dependOnClassesThat().resideInAPackage("io.pgqueue.internal..").check(TEST_KIT);
    }

    @Test
    void theTestKitRunsNoQueueSqlOfItsOwn() {
        // TestPostgres creates and drops the test database on the server: that is all the SQL the kit runs.
        noClasses().that().doNotHaveSimpleName("TestPostgres").should().dependOnClassesThat()
            .resideInAnyPackage("java.sql..", "org.springframework.jdbc.core..").check(TEST_KIT);
    }
}
