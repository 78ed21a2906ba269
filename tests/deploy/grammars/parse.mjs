// Why: the dashboards' queries must parse with the grammars Grafana's own editors use
// (@grafana/lezer-traceql, @prometheus-io/lezer-promql), not with a regex of ours.
// Used by tests/deploy/query_grammars.rs: one process for every query, so the test stays fast.
//
//   node parse.mjs <node_modules folder holding both grammar packages>
//   stdin:  [{"id": 0, "grammar": "traceql" | "promql", "text": "..."}, ...]
//   stdout: {"versions": {"traceql": "1.0.0", "promql": "0.305.0"},
//            "results": [{"id": 0, "top": "<top node>", "first": "<its first child>",
//                         "errors": [{"from": 12, "to": 13}]}, ...]}
//   (offsets in UTF-16 code units, as lezer counts them)
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.argv[2];
if (!modules) {
  console.error("usage: node parse.mjs <node_modules folder>");
  process.exit(2);
}

// Import each package by the ESM entry its own package.json exports, from that folder: the
// grammars are not installed next to this script.
async function load(name) {
  const dir = join(modules, name);
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const entry = pkg.exports?.import ?? pkg.module;
  const mod = await import(pathToFileURL(join(dir, entry)).href);
  return { parser: mod.parser, version: pkg.version };
}

const grammars = {
  traceql: await load("@grafana/lezer-traceql"),
  promql: await load("@prometheus-io/lezer-promql"),
};

const queries = JSON.parse(readFileSync(0, "utf8"));
const results = queries.map(({ id, grammar, text }) => {
  const g = grammars[grammar];
  if (!g) throw new Error(`query ${id}: no grammar ${grammar}`);
  const tree = g.parser.parse(text);
  const errors = [];
  // lezer recovers from syntax errors instead of failing: the only sign of one is an error
  // node (type.isError, named "⚠") somewhere in the tree.
  tree.iterate({
    enter(node) {
      if (node.type.isError) {
        errors.push({ from: node.from, to: node.to });
      }
    },
  });
  const first = tree.topNode.firstChild;
  return { id, top: tree.topNode.name, first: first ? first.name : "", errors };
});

process.stdout.write(
  JSON.stringify({
    versions: { traceql: grammars.traceql.version, promql: grammars.promql.version },
    results,
  }),
);
