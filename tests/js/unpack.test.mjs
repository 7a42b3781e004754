// The packed state of a page or a text/html twin (mlclab/notebook/static/unpack.js), run by
// node's own test runner (tests/test_viewer_js.py runs this): what Python's zlib.compress and
// base64 wrote comes back as the same JSON; a browser without DecompressionStream says so.
import { test } from "node:test";
import assert from "node:assert/strict";
import { deflateSync } from "node:zlib";
import { unpackState, PACKED, NO_DECOMPRESSION } from "../../mlclab/notebook/static/unpack.js";

const STATE = { views: { dataflow: { nodes: { "f:x": { label: "x <b>&" } } } }, view: "dataflow", search: "ü — 表" };
const script = (text, encoding) => ({ textContent: text, dataset: encoding ? { encoding } : {} });
const pack = (value) => deflateSync(Buffer.from(JSON.stringify(value), "utf-8"), { level: 9 }).toString("base64");

test("packed state comes back as the JSON it was, non-ASCII text included", async () => {
  assert.deepEqual(await unpackState(script(`\n${pack(STATE)}\n`, PACKED)), STATE);
});

test("state written as plain JSON (an older page) is still read", async () => {
  assert.deepEqual(await unpackState(script(JSON.stringify(STATE))), STATE);
});

test("damaged packed state is an error, not a half-drawn viewer", async () => {
  const broken = pack(STATE).slice(0, 40);
  await assert.rejects(unpackState(script(broken, PACKED)));
});

test("without DecompressionStream the error says why and what is shown instead", async () => {
  const saved = globalThis.DecompressionStream;
  delete globalThis.DecompressionStream;
  try {
    await assert.rejects(unpackState(script(pack(STATE), PACKED)), (err) => err.message === NO_DECOMPRESSION);
  } finally {
    globalThis.DecompressionStream = saved;
  }
  assert.match(NO_DECOMPRESSION, /static drawing is shown/);
});
