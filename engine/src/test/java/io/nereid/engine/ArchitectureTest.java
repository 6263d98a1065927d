package io.nereid.engine;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.Test;

/**
 * The dependency direction of DESIGN.md sections 1 and 4-6, checked on the compiled classes:
 * {@code kvcache} uses the JDK only; the engine never sees HTTP, JSON or native bindings; the
 * engine core never sees the CPU backend (it knows only {@code engine.backend}); the backend seam
 * depends on nothing above it; the API reaches backends only through {@code BackendProvider}.
 * (The gateway's rule is in {@code GatewayArchitectureTest}, native's in {@code NativeArchitectureTest}.)
 */
class ArchitectureTest {

    /** What the engine core and the KV cache must never import. */
    static final String[] FRONT_END_AND_NATIVE = {"io.vertx..", "com.fasterxml.jackson..", "org.bytedeco..",
        "io.netty..", "io.micrometer..", "io.nereid.gateway..", "io.nereid.openapi..", "io.nereid.nativebackend.."};

    private static final JavaClasses PRODUCTION = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.nereid");

    @Test
    void kvcacheDependsOnTheJdkOnly() {
        assertTrue(PRODUCTION.stream().filter(c -> c.getPackageName().equals("io.nereid.kvcache")).count() >= 8,
                "kvcache classes must be on the classpath, or this test proves nothing");
        ArchRule rule = classes().that().resideInAPackage("io.nereid.kvcache..")
                .should().onlyDependOnClassesThat().resideInAnyPackage("java..", "io.nereid.kvcache..")
                .because("the KV-cache manager is pure Java (DESIGN.md section 1)");
        rule.check(PRODUCTION);
    }

    @Test
    void engineNeverImportsVertxJacksonOrJavaCpp() {
        engineRule(FRONT_END_AND_NATIVE).check(PRODUCTION);
    }

    @Test
    void theEngineCoreNeverSeesTheCpuBackend() {
        noClasses().that().resideInAPackage("io.nereid.engine.core..")
                .should().dependOnClassesThat().resideInAnyPackage("io.nereid.engine.cpu..")
                .because("the core plans, runs and processes steps over engine.backend only (DESIGN.md section 4)")
                .check(PRODUCTION);
    }

    @Test
    void theBackendSeamDependsOnNothingAboveIt() {
        classes().that().resideInAPackage("io.nereid.engine.backend..")
                .should().onlyDependOnClassesThat().resideInAnyPackage("java..", "io.nereid.engine.backend..",
                        "io.nereid.engine.model..", "io.nereid.engine.gguf..", "io.nereid.kvcache..")
                .because("a backend gets a model and slices of tokens; it never sees the core, the API or another backend")
                .check(PRODUCTION);
    }

    @Test
    void theApiAndTheSamplingChainNeverSeeTheCpuBackend() {
        noClasses().that().resideInAnyPackage("io.nereid.engine.api..", "io.nereid.engine.sampling..")
                .should().dependOnClassesThat().resideInAnyPackage("io.nereid.engine.cpu..")
                .because("Engines.open finds backends by name through BackendProvider (ServiceLoader)")
                .check(PRODUCTION);
    }

    @Test
    void theRuleReportsARealDependency() {
        // Negative control: this very test class depends on JUnit, so forbidding JUnit must fail.
        JavaClasses tests = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.ONLY_INCLUDE_TESTS)
                .importPackages("io.nereid.engine");
        assertFalse(tests.isEmpty());
        assertTrue(engineRule("org.junit..").evaluate(tests).hasViolation());
        assertFalse(engineRule(FRONT_END_AND_NATIVE).evaluate(tests).hasViolation());
    }

    private static ArchRule engineRule(String... forbidden) {
        return noClasses().that().resideInAPackage("io.nereid.engine..")
                .should().dependOnClassesThat().resideInAnyPackage(forbidden)
                .because("OpenAI types, HTTP and native bindings never enter the engine (DESIGN.md section 1)");
    }
}
