// lint.js runs abaplint (@abaplint/core, installed by internal/abapref/oracle) over the abapGit
// package with abaplint.json: its default rules plus those the config names. It prints one
// line per issue and exits 1 when there is any.
//
// usage: NODE_PATH=<oracle>/node_modules node lint.js <package folder>
"use strict";
const fs = require("fs");
const path = require("path");
const abaplint = require("@abaplint/core");

const dir = process.argv[2];
const conf = abaplint.Config.getDefault().get();
const own = JSON.parse(fs.readFileSync(path.join(__dirname, "abaplint.json"), "utf8"));
conf.syntax = Object.assign(conf.syntax, own.syntax);
for (const [k, v] of Object.entries(own.rules)) {
  if (v === false) delete conf.rules[k];
  else conf.rules[k] = v;
}
const reg = new abaplint.Registry(new abaplint.Config(JSON.stringify(conf)));
const walk = (d) => fs.readdirSync(d, { withFileTypes: true }).forEach((e) => {
  const p = path.join(d, e.name);
  if (e.isDirectory()) walk(p);
  else if (/\.(abap|xml)$/.test(e.name)) reg.addFile(new abaplint.MemoryFile(e.name, fs.readFileSync(p, "utf8")));
});
walk(path.join(dir, "src"));
reg.parse();
const issues = reg.findIssues();
for (const i of issues) {
  console.log(`${i.getFilename()}:${i.getStart().getRow()}: [${i.getKey()}] ${i.getMessage()}`);
}
console.log(`abaplint: ${issues.length} issues`);
process.exit(issues.length > 0 ? 1 : 0);
