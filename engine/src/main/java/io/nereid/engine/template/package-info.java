/**
 * HF chat templates: a Jinja interpreter that renders a model's {@code chat_template} exactly as
 * HF transformers' {@code apply_chat_template} does with Python Jinja2
 * ({@code ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
 * extensions=[loopcontrols])}, HF's {@code tojson}, {@code raise_exception} and
 * {@code strftime_now}), byte for byte.
 *
 * <p>Entry points: {@link io.nereid.engine.template.ChatTemplate} (compile once, render many
 * times, thread-safe) and {@link io.nereid.engine.template.ChatRequestContext}. Every failure is
 * a {@link io.nereid.engine.template.TemplateException}.
 *
 * <p>Pipeline: {@code Lexer} (Jinja2's whitespace rules) → {@code Parser}/{@code ExprParser}
 * (sealed {@code Node}/{@code Expr} records) → {@code Evaluator} (a tree walker with
 * {@code Frame} scopes). Python semantics live in {@code PyValues} (truth, str/repr, equality,
 * ordering), {@code PyOps} (operators), {@code PyAccess} (attribute/item/slice), {@code PyStrings}
 * and {@code StrMethods}/{@code Methods} (methods), {@code PyFormat} ({@code %} and
 * {@code str.format}), {@code JsonDumper} ({@code json.dumps}); the filter, test and global tables
 * are {@code Filters}/{@code SequenceFilters}, {@code Tests} and {@code Globals}.
 *
 * <p>Known differences from Python Jinja2, none of which the HF templates we test rely on:
 * <ul>
 *   <li>lists built by the template may be mutated ({@code append}, {@code extend}, {@code pop},
 *       ...), where HF's immutable sandbox raises a {@code SecurityError}; so a template that works
 *       under HF works here, not necessarily the reverse. Caller data is never mutated;</li>
 *   <li>{@code map}, {@code select}, {@code reject}, {@code items}, {@code dict.items()},
 *       {@code range()} return lists, so printing one without {@code |list} shows a list rather
 *       than {@code <generator ...>}, {@code dict_items([...])} or {@code range(0, 3)};</li>
 *   <li>ints are 64-bit: a result that needs more raises {@code OverflowError};</li>
 *   <li>there is no {@code Markup} type: {@code escape} returns a plain string (autoescape is off
 *       in HF, so this only matters for escaping twice);</li>
 *   <li>macros always accept extra arguments into {@code varargs}/{@code kwargs}; Jinja2 rejects
 *       them unless the body mentions those names;</li>
 *   <li>{@code extends}, {@code include}, {@code import}, {@code block} are syntax errors (a chat
 *       template is one source); the filters {@code groupby}, {@code slice}, {@code striptags},
 *       {@code urlize}, {@code wordwrap}, {@code xmlattr}, {@code filesizeformat},
 *       {@code urlencode}, {@code random}, {@code forceescape} parse but fail if rendered;</li>
 *   <li>{@code strftime_now}'s {@code %z}/{@code %Z} are empty (HF formats a naive local time);</li>
 *   <li>character classes and case mappings come from Java's Unicode tables, which can differ
 *       from CPython's for characters new in one Unicode version;</li>
 *   <li>like Jinja2 there is no time or output limit; only {@code range()} (100,000 items),
 *       sequence repetition and call depth are bounded.</li>
 * </ul>
 */
package io.nereid.engine.template;
