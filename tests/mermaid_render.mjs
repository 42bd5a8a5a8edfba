// Renders every ```mermaid block of a Markdown file in headless Chromium with mermaid's own bundle, the way
// GitHub draws a comment, and writes one PNG per block: the only way to see whether a chart is readable.
//
//   CURVEDOC_MERMAID_MODULES=/path/to/node_modules node tests/mermaid_render.mjs report.md OUT_DIR
//
// The node_modules folder needs `mermaid` and `playwright-core` (npm install mermaid playwright-core); Chromium is
// /usr/bin/chromium unless CURVEDOC_CHROMIUM names another. Prints one JSON line per block:
// {"block": 1, "png": "OUT_DIR/block-001.png", "svg": true, "error": null, "x_labels": 7, "y_labels": 9}.
// Exits 1 when any block failed to render.

import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";

const modules = process.env.CURVEDOC_MERMAID_MODULES;
const [markdownFile, outDir] = process.argv.slice(2);
if (!modules || !markdownFile || !outDir) {
  console.error("usage: CURVEDOC_MERMAID_MODULES=DIR node mermaid_render.mjs REPORT.md OUT_DIR");
  process.exit(2);
}
// Resolved from the given folder, not from this repository: the project itself has no node dependencies.
const require = createRequire(path.join(path.resolve(modules), "noop.js"));
const { chromium } = require("playwright-core");
const bundle = path.join(path.resolve(modules), "mermaid", "dist", "mermaid.min.js");

const blocks = [...readFileSync(markdownFile, "utf8").matchAll(/```mermaid\n([\s\S]*?)```/g)].map((m) => m[1]);
mkdirSync(outDir, { recursive: true });

const profile = mkdtempSync(path.join(tmpdir(), "curvedoc-chromium-"));
// A fresh profile each run (playwright passes it as --user-data-dir): no state from an earlier browser.
const browser = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CURVEDOC_CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
  viewport: { width: 900, height: 700 },
  deviceScaleFactor: 1,
});
let failed = 0;
try {
  const page = await browser.newPage();
  await page.setContent("<!doctype html><html><body style='margin:0;background:#fff'><div id='chart'></div></body></html>");
  await page.addScriptTag({ path: bundle });
  await page.evaluate(() => window.mermaid.initialize({ startOnLoad: false, securityLevel: "strict" }));
  for (const [index, code] of blocks.entries()) {
    const result = await page.evaluate(async ({ code, id }) => {
      const target = document.getElementById("chart");
      target.innerHTML = "";
      try {
        const { svg } = await window.mermaid.render(id, code);
        target.innerHTML = svg;
      } catch (error) {
        return { svg: false, error: String(error && error.message ? error.message : error) };
      }
      const drawn = target.querySelector("svg");
      const text = target.textContent || "";
      const count = (selector) => target.querySelectorAll(selector).length;
      return {
        svg: Boolean(drawn),
        error: /Syntax error/i.test(text) ? "Syntax error in the rendered chart" : null,
        x_labels: count("g.bottom-axis g.label text"),
        y_labels: count("g.left-axis g.label text"),
      };
    }, { code, id: `chart${index + 1}` });
    const png = path.join(outDir, `block-${String(index + 1).padStart(3, "0")}.png`);
    if (result.svg) {
      await page.locator("#chart svg").screenshot({ path: png });
    }
    if (!result.svg || result.error) failed += 1;
    console.log(JSON.stringify({ block: index + 1, png: result.svg ? png : null, ...result }));
  }
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
