// A minimal client for symtf's language server: it starts `symtf lsp` and lets
// vscode-languageclient do the rest (diagnostics, hovers, code actions, notebooks).
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const config = vscode.workspace.getConfiguration("symtf");
  const [command, ...args] = config.get("command", ["symtf", "lsp"]);
  const languages = ["markdown", "latex", "plaintext", "toml"];
  client = new LanguageClient(
    "symtf",
    "symtf",
    { command, args },
    {
      documentSelector: [
        ...languages.map((language) => ({ scheme: "file", language })),
        ...languages.map((language) => ({ scheme: "untitled", language })),
        { notebook: "jupyter-notebook", language: "markdown" },
        { notebook: "jupyter-notebook", language: "python" },
      ],
      synchronize: { configurationSection: "symtf" },
      initializationOptions: {
        symtf: {
          timeout: config.get("timeout", 60),
          showUnchecked: config.get("showUnchecked", false),
        },
      },
    },
  );
  context.subscriptions.push({ dispose: () => client && client.stop() });
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
