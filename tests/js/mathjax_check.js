// Render LaTeX fragments with MathJax 3 (TeX input with the base and AMS packages,
// as a page's default configuration loads them) to MathML: one JSON array of strings
// on standard input; one JSON array of {ok, error} on standard output. MathJax
// reports an unknown macro or environment as an <merror> node, which fails here.
"use strict";
const { mathjax } = require("mathjax-full/js/mathjax.js");
const { TeX } = require("mathjax-full/js/input/tex.js");
const { liteAdaptor } = require("mathjax-full/js/adaptors/liteAdaptor.js");
const { RegisterHTMLHandler } = require("mathjax-full/js/handlers/html.js");
const { SerializedMmlVisitor } = require("mathjax-full/js/core/MmlTree/SerializedMmlVisitor.js");
require("mathjax-full/js/input/tex/base/BaseConfiguration.js");
require("mathjax-full/js/input/tex/ams/AmsConfiguration.js");

const adaptor = liteAdaptor();
RegisterHTMLHandler(adaptor);
const tex = new TeX({ packages: ["base", "ams"] });
const doc = mathjax.document("", { InputJax: tex });
const visitor = new SerializedMmlVisitor();

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const out = JSON.parse(input).map((src) => {
    try {
      const mml = visitor.visitTree(doc.convert(src, { display: true }));
      const m = mml.match(/<merror[^>]*data-mjx-error="([^"]*)"/) || mml.match(/<merror[\s\S]*?<mtext>([^<]*)<\/mtext>/);
      return m ? { ok: false, error: m[1] } : { ok: true, error: "" };
    } catch (e) {
      return { ok: false, error: String(e.message || e) };
    }
  });
  process.stdout.write(JSON.stringify(out));
});
