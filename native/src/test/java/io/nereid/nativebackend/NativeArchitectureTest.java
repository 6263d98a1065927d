package io.nereid.nativebackend;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * Native backends see the engine through the backend seam only: {@code engine.backend} and what it
 * hands a backend (the model description in {@code engine.model}, tensor types in {@code engine.gguf},
 * block copies in {@code kvcache}) — never the engine core, the API, the CPU backend or a front end
 * (DESIGN.md sections 1 and 6).
 */
class NativeArchitectureTest {

    @Test
    void nativeBackendsUseOnlyTheBackendSeam() {
        JavaClasses production = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.nereid.nativebackend");
        org.junit.jupiter.api.Assertions.assertTrue(production.size() > 10, "the backend's classes must be on the class path");
        classes().that().resideInAPackage("io.nereid.nativebackend..")
                .should().onlyDependOnClassesThat().resideInAnyPackage("java..", "javax..", "org.bytedeco..",
                        "io.nereid.nativebackend..", "io.nereid.engine.backend..", "io.nereid.engine.model..",
                        "io.nereid.engine.gguf..", "io.nereid.kvcache..")
                .because("a backend plugs in through engine.backend and BackendProvider, nothing else")
                .check(production);
    }
}
