package io.nereid.gateway;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;

/**
 * A command's picocli spec from a table of options (the one list its parser, help and checks use):
 * options that take one value or none, {@code -h/--help}, later repeats overriding earlier ones,
 * and positional parameters.
 */
public final class CliSpec {

    /** One option: its flag, value label (null: a switch), help, and other names for it ({@code -t} for {@code --threads}). */
    public record Option(String name, String label, String help, List<String> aliases) {
        public Option(String name, String label, String help) {
            this(name, label, help, List.of());
        }
    }

    /** Positional parameters: a label, picocli's arity ({@code "1"}, {@code "1..*"}) and help. */
    public record Positional(String label, String arity, String help) {
    }

    /**
     * A parsed command line: each given option's value by its {@link Option#name} ("true" for a switch), the
     * positionals, whether help was asked, and each option's names as messages show them ({@code -p/--n-prompt}).
     */
    public record Parsed(Map<String, String> options, List<String> positionals, boolean help, Map<String, String> shown) {

        public String get(String name, String fallback) {
            return options.getOrDefault(name, fallback);
        }

        /** An option's value as an int of at least {@code min}, or {@code fallback} when not given. */
        public int integer(String name, int fallback, int min) {
            String v = options.get(name);
            if (v == null) {
                return fallback;
            }
            int n;
            try {
                n = Integer.parseInt(v);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(shown.getOrDefault(name, name) + " must be an integer, got '" + v + "'");
            }
            if (n < min) {
                throw new IllegalArgumentException(shown.getOrDefault(name, name) + " must be >= " + min + ", got " + n);
            }
            return n;
        }
    }

    private CliSpec() {
    }

    /** The spec of command {@code name}: {@code synopsis} lines, {@code description}, {@code options} in order. */
    public static CommandSpec of(String name, List<String> synopsis, String description, List<Option> options) {
        return of(name, synopsis, description, options, List.of());
    }

    /** As {@link #of(String, List, String, List)}, with positional parameters after the options. */
    public static CommandSpec of(String name, List<String> synopsis, String description, List<Option> options,
            List<Positional> positionals) {
        CommandSpec spec = CommandSpec.create().name(name);
        spec.usageMessage().customSynopsis(synopsis.toArray(String[]::new)).description(description).sortOptions(false)
                .width(110);
        for (Option o : options) {
            List<String> names = new ArrayList<>(o.aliases());
            names.add(o.name());   // picocli lists the names shortest first; the record's name is the key
            OptionSpec.Builder b = OptionSpec.builder(names.toArray(String[]::new)).description(o.help());
            if (o.label() == null) {
                b.arity("0").type(boolean.class);
            } else {
                b.arity("1").paramLabel(o.label()).type(String.class);
            }
            spec.addOption(b.build());
        }
        spec.addOption(OptionSpec.builder("-h", "--help").usageHelp(true).description("this text").build());
        for (int i = 0; i < positionals.size(); i++) {
            Positional p = positionals.get(i);
            boolean many = p.arity().contains("*");
            PositionalParamSpec.Builder b = PositionalParamSpec.builder().paramLabel(p.label()).arity(p.arity())
                    .index(many ? i + "..*" : Integer.toString(i)).description(p.help());
            if (many) {
                b.type(List.class).auxiliaryTypes(String.class);
            } else {
                b.type(String.class);
            }
            spec.addPositional(b.build());
        }
        spec.parser().overwrittenOptionsAllowed(true);
        return spec;
    }

    /**
     * Parses {@code words} (the command's own, without its name) against {@code spec}. An unknown option
     * or a missing value is an {@link IllegalArgumentException} whose message names it (with the options
     * likely meant); a missing positional is one only when help was not asked.
     */
    public static Parsed parse(CommandSpec spec, List<Option> table, String[] words) {
        CommandLine.ParseResult given;
        try {
            CommandLine cl = new CommandLine(spec);
            given = cl.parseArgs(words);
        } catch (CommandLine.UnmatchedArgumentException e) {
            List<String> like = e.getSuggestions();
            String word = e.getUnmatched().isEmpty() ? "" : e.getUnmatched().getFirst();
            throw new IllegalArgumentException((word.startsWith("-") ? "unknown option '" : "unexpected argument '") + word
                    + "'" + (like.isEmpty() ? "" : "; did you mean " + String.join(" or ", like) + "?"));
        } catch (CommandLine.MissingParameterException e) {
            if (List.of(words).contains("--help") || List.of(words).contains("-h")) {
                return new Parsed(Map.of(), List.of(), true, Map.of());
            }
            String m = e.getMessage();
            throw new IllegalArgumentException(m.startsWith("Missing required parameter for option '")
                    ? m.substring(m.indexOf('\'') + 1, m.indexOf('\'', m.indexOf('\'') + 1)) + " needs a value" : m);
        } catch (CommandLine.ParameterException e) {
            throw new IllegalArgumentException(e.getMessage());
        }
        Map<String, String> options = new LinkedHashMap<>();
        Map<String, String> shown = new LinkedHashMap<>();
        for (Option o : table) {
            List<String> names = new ArrayList<>(o.aliases());
            names.add(o.name());
            shown.put(o.name(), String.join("/", names));
            if (given.hasMatchedOption(o.name())) {
                Object v = given.matchedOptionValue(o.name(), null);
                options.put(o.name(), v instanceof Boolean ? "true" : String.valueOf(v));
            }
        }
        List<String> positionals = new ArrayList<>();
        for (PositionalParamSpec p : given.matchedPositionals()) {
            positionals.addAll(p.stringValues());
        }
        List<String> missing = new ArrayList<>();
        int seen = positionals.size();
        for (PositionalParamSpec p : spec.positionalParameters()) {
            if (p.arity().min() > 0 && seen-- <= 0) {
                missing.add(p.paramLabel());
            }
        }
        if (!missing.isEmpty() && !given.isUsageHelpRequested()) {
            throw new IllegalArgumentException("missing " + String.join(" ", missing));
        }
        return new Parsed(options, positionals, given.isUsageHelpRequested(), shown);
    }

    /** The help text, without colours, starting "usage: ". */
    public static String usage(CommandSpec spec) {
        return "usage: " + new CommandLine(spec).getUsageMessage(CommandLine.Help.Ansi.OFF).replaceFirst("^Usage: ", "");
    }
}
