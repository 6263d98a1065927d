package io.nereid.gateway;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.Test;

/**
 * The gateway sees the engine through {@code engine.api} and the text front end (tokenizer, chat
 * templates, incremental detokenizer) only: never the engine core, a backend, the CPU kernels or
 * tensors, the model loaders or the sampling chain (DESIGN.md section 1).
 */
class GatewayArchitectureTest {

    private static final String[] ALLOWED = {"io.nereid.engine.api..", "io.nereid.engine.tokenizer..",
        "io.nereid.engine.template..", "io.nereid.engine.text..",
        "io.nereid.engine.tools"};   // the model-file tools' typed entry points, whose command lines the gateway parses

    private static ArchRule gatewayUsesOnlyTheEngineApi() {
        return classes().that().resideInAPackage("io.nereid.gateway..")
                .should().onlyDependOnClassesThat(not(resideInAnyPackage("io.nereid.engine..")).or(resideInAnyPackage(ALLOWED)))
                .because("front ends only parse and format; Engines.open assembles the engine (DESIGN.md section 1)");
    }

    @Test
    void theGatewayUsesOnlyTheEngineApiAndTheTextFrontEnd() {
        JavaClasses production = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.nereid.gateway");
        assertTrue(production.size() > 20, "gateway classes must be on the class path, or this test proves nothing");
        gatewayUsesOnlyTheEngineApi().check(production);
    }

    @Test
    void theRuleReportsARealDependency() {
        // Negative control: the tests inject a failing backend (engine.backend), which the rule must catch.
        JavaClasses tests = new ClassFileImporter().withImportOption(ImportOption.Predefined.ONLY_INCLUDE_TESTS)
                .importPackages("io.nereid.gateway");
        assertFalse(tests.isEmpty());
        assertTrue(gatewayUsesOnlyTheEngineApi().evaluate(tests).hasViolation());
    }
}
