/**
 * Text to token ids and back, exactly as each model's reference implementation does it:
 * {@link io.nereid.engine.tokenizer.Tokenizer} is the interface,
 * {@link io.nereid.engine.tokenizer.GgufTokenizerLoader} builds one from GGUF metadata as
 * llama.cpp does (SentencePiece or byte-level BPE with its pre-tokenizer regexes), and
 * {@link io.nereid.engine.tokenizer.HfTokenizerLoader} from a Hugging Face {@code tokenizer.json}
 * as HF tokenizers does. Special and added tokens are cut out first, each remaining fragment is
 * pre-tokenized and merged ({@code SpecialTokenSplitter}, {@code RegexSplitter},
 * {@code BpeMerger}, {@code SentencePieceEncoder}); decoding is defined on each token's bytes, so
 * the incremental detokenizer of {@code io.nereid.engine.text} reproduces it. Anything a loader
 * does not implement is a {@link io.nereid.engine.tokenizer.TokenizerException}, never a silent
 * approximation.
 *
 * <p>Threading: loaders are stateless; tokenizers are immutable and thread-safe (the BPE word cache
 * is concurrent). Depends on {@code gguf} and {@code json}.
 */
package io.nereid.engine.tokenizer;
