// oracle.js runs abaplint (@abaplint/core) over abapGit-format folders and
// prints, per ABAP object, the objects its syntax check resolves references
// to, by class: "oo" (classes and interfaces), "table" (database tables and
// views in SQL and TABLES) and "type" (DDIC types). The Go test
// (oracle_test.go) compares this with internal/abapref.
//
// usage: node oracle.js [--deps <folder>] <folder>... > refs.json
//
// --deps names a folder of stubs of SAP objects (abaplint's own dependency
// collection, github.com/abaplint/deps): they are known to the syntax check,
// so fewer objects stop at a void superclass, but they are not reported.
"use strict";
const fs = require("fs");
const path = require("path");
const abaplint = require("@abaplint/core");

function walk(dir, out) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else out.push(p);
  }
}

// objectOf is "TYPE NAME" of an abapGit file name (zcl_x.clas.locals_imp.abap).
function objectOf(file) {
  const parts = path.basename(file).split(".");
  if (parts.length < 3) return undefined;
  return parts[1].toUpperCase() + " " + parts[0].toUpperCase().replace(/#/g, "/");
}

// parses reports whether abaplint reads a DDIC file on its own; one it
// cannot read (a field without DATATYPE) would abort the whole registry.
function parses(file) {
  try {
    new abaplint.Registry().addFile(file).parse();
    return true;
  } catch (e) {
    return false;
  }
}

const conf = abaplint.Config.getDefault();
const raw = conf.get();
// Every name the corpus does not define is void (as on a system without the
// SAP dependencies): abaplint still records a void reference to it.
raw.syntax.errorNamespace = "^$";
const reg = new abaplint.Registry(new abaplint.Config(JSON.stringify(raw)));
const args = process.argv.slice(2);
const depDirs = [];
while (args[0] === "--deps") {
  depDirs.push(args[1]);
  args.splice(0, 2);
}
const depFiles = new Set();
for (const dir of depDirs) {
  const files = [];
  walk(dir, files);
  for (const f of files) {
    if (!/\.(abap|xml)$/.test(f)) continue;
    depFiles.add(path.basename(f).toUpperCase());
    reg.addDependency(new abaplint.MemoryFile(path.basename(f), fs.readFileSync(f, "utf8")));
  }
}
for (const dir of args) {
  const files = [];
  walk(dir, files);
  for (const f of files) {
    if (!/\.(abap|xml|asddls|asdcls|asbdef|asddlxs)$/.test(f)) continue;
    const file = new abaplint.MemoryFile(path.basename(f), fs.readFileSync(f, "utf8"));
    if (f.endsWith(".xml") && !parses(file)) {
      process.stderr.write(`skipped ${path.basename(f)}: abaplint cannot read it\n`);
      continue;
    }
    reg.addFile(file);
  }
}
reg.parse();

// ownerOf maps a file name to the object that holds it; includes are the
// include programs, whose local classes are local to their main program.
const ownerOf = new Map();
const includes = new Set();
for (const obj of reg.getObjects()) {
  if (obj instanceof abaplint.Objects.Program && obj.isInclude()) includes.add(obj.getType() + " " + obj.getName());
  for (const f of obj.getFiles()) ownerOf.set(f.getFilename().toUpperCase(), obj.getType() + " " + obj.getName());
}

// The built-in types abaplint declares itself for what SAP defines in DDIC.
const builtinFile = "_builtin.prog.abap";
const builtinDDIC = { ABAP_BOOL: "ABAP_BOOL", SY: "SYST", SYST: "SYST", CURSOR: "CURSOR" };

const result = {};
const errors = {};
for (const obj of reg.getObjects()) {
  if (!(obj instanceof abaplint.ABAPObject) || reg.isDependency(obj)) continue;
  const self = obj.getType() + " " + obj.getName();
  const refs = new Set();
  // an include is checked only as part of its main program
  if (obj instanceof abaplint.Objects.Program && obj.isInclude()) {
    errors[self] = "an include: abaplint checks it only within its main program";
    continue;
  }
  let run;
  try {
    run = new abaplint.SyntaxLogic(reg, obj).run();
  } catch (e) {
    process.stderr.write(`${self}: ${e}\n`);
    continue;
  }
  // abaplint stops an object's syntax check at its first error: the references
  // after it are missing, so such an object is reported and left out.
  if (run.issues.length > 0) {
    const i = run.issues[0];
    errors[self] = `${i.getFilename()}:${i.getStart().getRow()}: ${i.getMessage()}`;
    continue;
  }
  const spaghetti = run.spaghetti;
  const visit = (node) => {
    for (const r of node.getData().references) {
      const name = r.position.getName().toUpperCase();
      const resolvedIn = r.resolved ? ownerOf.get(r.resolved.getFilename().toUpperCase()) : undefined;
      switch (r.referenceType) {
        case abaplint.ReferenceType.ObjectOrientedReference:
        case abaplint.ReferenceType.ObjectOrientedVoidReference:
        case abaplint.ReferenceType.ObjectOrientedUnknownReference: {
          // "zif_x~meth" in METHOD zif_x~meth refers to the interface
          const oo = (r.extra && r.extra.ooName ? r.extra.ooName : name).toUpperCase().split("~")[0];
          if (resolvedIn === self || includes.has(resolvedIn)) break; // a local class or the object itself
          if (resolvedIn === undefined && r.referenceType === abaplint.ReferenceType.ObjectOrientedReference) break;
          refs.add("oo " + oo);
          break;
        }
        case abaplint.ReferenceType.TableReference:
        case abaplint.ReferenceType.TableVoidReference:
          refs.add("table " + name);
          break;
        case abaplint.ReferenceType.VoidType:
          refs.add("type " + name.split("-")[0]);
          break;
        case abaplint.ReferenceType.TypeReference:
          // abaplint's built-in stand-ins for SAP DDIC types: TYPE abap_bool
          // (type group ABAP), TYPE sy-datum / syst-uname (structure SYST)
          if (r.resolved && r.resolved.getFilename() === builtinFile && builtinDDIC[name]) {
            refs.add("type " + builtinDDIC[name]);
            break;
          }
          // resolved to a DDIC object of the corpus: a type of another object
          if (resolvedIn && resolvedIn !== self && /^(DTEL|TABL|TTYP|DDLS|VIEW|TYPE) /.test(resolvedIn)) {
            refs.add("type " + resolvedIn.split(" ")[1]);
          }
          break;
      }
    }
    for (const c of node.getChildren()) visit(c);
  };
  visit(spaghetti.getTop());
  // DDIC objects of the corpus the syntax check resolved (TYPE zdtel, TYPE
  // ztab): abaplint keeps these as DDIC references, not scope references.
  for (const u of reg.getDDICReferences().listUsing(obj)) {
    if (!u.object) continue;
    const t = u.object.getType();
    if (/^(DTEL|TABL|TTYP|DDLS|VIEW|TYPE)$/.test(t) && !refs.has("table " + u.object.getName())) {
      refs.add("type " + u.object.getName());
    }
  }
  refs.delete("oo " + obj.getName());
  result[self] = [...refs].sort();
}
process.stdout.write(JSON.stringify({ version: abaplint.Registry.abaplintVersion(), objects: result, errors }, null, 1) + "\n");
