// Encodes the benchmark corpora with HF `tokenizers` (the Rust library through its Node
// binding) and prints MB/s per tokenizer and corpus; writes the ids for an exact comparison.
// Usage: node hf-encode.cjs FIXTURES_DIR CORPUS_DIR OUT_DIR
const { Tokenizer } = require('tokenizers');
const fs = require('fs');
const path = require('path');

async function main() {
  const [fixtures, corpusDir, outDir] = process.argv.slice(2);
  fs.mkdirSync(outDir, { recursive: true });
  for (const name of ['llama3', 'qwen3']) {
    const tok = Tokenizer.fromFile(path.join(fixtures, 'tokenizers', name, 'tokenizer.json'));
    for (const corpus of ['prose', 'code']) {
      const text = fs.readFileSync(path.join(corpusDir, corpus + '.txt'), 'utf8');
      const mb = Buffer.byteLength(text, 'utf8') / (1 << 20);
      let enc;
      for (let i = 0; i < 3; i++) enc = await tok.encode(text, null, { addSpecialTokens: false });
      const runs = 10;
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < runs; i++) enc = await tok.encode(text, null, { addSpecialTokens: false });
      const secs = Number(process.hrtime.bigint() - t0) / 1e9;
      const ids = enc.getIds();
      fs.writeFileSync(path.join(outDir, `${name}-${corpus}.ids`), ids.join('\n'));
      console.log(`hf-tokenizers ${name} ${corpus} whole 1 MB string: ${(runs * mb / secs).toFixed(2)} MB/s (${ids.length} tokens)`);
      // Prompt-sized inputs: the same text cut into ~4 KB pieces at line ends, encoded one by one.
      const pieces = [];
      for (let start = 0; start < text.length;) {
        let end = Math.min(text.length, start + 4096);
        const nl = text.indexOf('\n', end);
        end = nl < 0 ? text.length : nl + 1;
        pieces.push(text.slice(start, end));
        start = end;
      }
      for (const p of pieces) await tok.encode(p, null, { addSpecialTokens: false });
      const t1 = process.hrtime.bigint();
      for (let i = 0; i < runs; i++) for (const p of pieces) await tok.encode(p, null, { addSpecialTokens: false });
      const secs2 = Number(process.hrtime.bigint() - t1) / 1e9;
      console.log(`hf-tokenizers ${name} ${corpus} 4 KB pieces: ${(runs * mb / secs2).toFixed(2)} MB/s (${pieces.length} pieces)`);
    }
  }
}
main();
