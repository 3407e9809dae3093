// Render LaTeX fragments with KaTeX, the way a web page would: one JSON array of
// strings on standard input; one JSON array of {ok, error} on standard output.
// Strict mode "error": any input KaTeX would only warn about fails too.
"use strict";
const katex = require("katex");
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const out = JSON.parse(input).map((tex) => {
    try {
      katex.renderToString(tex, { displayMode: true, throwOnError: true, strict: "error", trust: false });
      return { ok: true, error: "" };
    } catch (e) {
      return { ok: false, error: String(e.message || e) };
    }
  });
  process.stdout.write(JSON.stringify(out));
});
