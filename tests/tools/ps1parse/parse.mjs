// Parse a PowerShell script with tree-sitter's PowerShell grammar; print what did not parse.
// node parse.mjs FILE -> {"ok": bool, "errors": ["ERROR at line:col: text", ...]}
import fs from "fs";

const Parser = (await import("tree-sitter")).default;
const PowerShell = (await import("tree-sitter-powershell/bindings/node/index.js")).default;

const parser = new Parser();
parser.setLanguage(PowerShell);
const text = fs.readFileSync(process.argv[2], "utf8");
const tree = parser.parse((i) => text.slice(i, i + 4096));
const errors = [];
(function walk(node) {
  if (node.type === "ERROR" || node.isMissing) {
    const where = `${node.startPosition.row + 1}:${node.startPosition.column + 1}`;
    const what = text.slice(node.startIndex, Math.min(node.endIndex, node.startIndex + 60));
    errors.push(`${node.isMissing ? "MISSING " : ""}${node.type} at ${where}: ${what}`);
  }
  for (const child of node.children) walk(child);
})(tree.rootNode);
console.log(JSON.stringify({ ok: errors.length === 0, root: tree.rootNode.type, errors }));
