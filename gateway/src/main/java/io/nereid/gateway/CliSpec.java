package io.nereid.gateway;

import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * A command's picocli spec from a table of options (the one list its parser, help and checks use):
 * options that take one value or none, {@code -h/--help}, later repeats overriding earlier ones.
 */
public final class CliSpec {

    /** One option: its flag, value label (null: a switch) and help. */
    public record Option(String name, String label, String help) {
    }

    private CliSpec() {
    }

    /** The spec of command {@code name}: {@code synopsis} lines, {@code description}, {@code options} in order. */
    public static CommandSpec of(String name, List<String> synopsis, String description, List<Option> options) {
        CommandSpec spec = CommandSpec.create().name(name);
        spec.usageMessage().customSynopsis(synopsis.toArray(String[]::new)).description(description).sortOptions(false)
                .width(110);
        for (Option o : options) {
            OptionSpec.Builder b = OptionSpec.builder(o.name()).description(o.help());
            if (o.label() == null) {
                b.arity("0").type(boolean.class);
            } else {
                b.arity("1").paramLabel(o.label()).type(String.class);
            }
            spec.addOption(b.build());
        }
        spec.addOption(OptionSpec.builder("-h", "--help").usageHelp(true).description("this text").build());
        spec.parser().overwrittenOptionsAllowed(true);
        return spec;
    }

    /** The help text, without colours, starting "usage: ". */
    public static String usage(CommandSpec spec) {
        return "usage: " + new CommandLine(spec).getUsageMessage(CommandLine.Help.Ansi.OFF).replaceFirst("^Usage: ", "");
    }
}
