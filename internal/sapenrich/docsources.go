package sapenrich

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/sapagent/sapagent/internal/sapindex"
)

// What each doc is written from. Every input is bounded (objects, usages, source excerpt), so
// a prompt's size does not grow with the landscape.
const (
	pkgMaxObjects  = 80 // objects a package prompt lists
	pkgMaxUsages   = 40 // used objects a package prompt lists
	objMaxRels     = 60 // relationships an object prompt lists
	objMaxFindings = 10
	procMaxObjects = 60
	procMaxPkgs    = 30
)

const systemPrompt = `You document an SAP system's custom ABAP development for its developers and key users.
Write concise, factual Markdown (no top-level heading: the title is added for you). Use only the facts given;
say so when something cannot be told from them. Never invent object names.`

// objectDocs streams the scope's custom objects in keyset pages (model calls are slow, so no
// query stays open across them) and submits a technical doc per object.
func (r *docRunner) objectDocs(ctx context.Context) error {
	const page = 200
	lastType, lastName := "", ""
	for {
		objs, err := r.db.ObjectDocInputs(ctx, r.s.selection(), lastType, lastName, sapindex.ObjectDocLimits{
			SourceChars: r.opts.SourceExcerptChars, Relationships: objMaxRels, Findings: objMaxFindings, Objects: page})
		if err != nil {
			return fmt.Errorf("read objects for docs: %w", err)
		}
		jobs := make([]docJob, 0, len(objs))
		for _, o := range objs {
			jobs = append(jobs, objectJob(o.ObjectType, o.ObjectName, o.Package, o.Description, parseFields(o.Fields), o.Source,
				o.SourceLen, o.Relationships, o.Level, o.Findings, o.OldHash))
		}
		for _, j := range jobs {
			if err := r.submit(ctx, j); err != nil {
				return err
			}
		}
		if len(jobs) < page {
			return nil
		}
		lastType, lastName, _ = strings.Cut(jobs[len(jobs)-1].subject, " ")
	}
}

func objectJob(typ, name, pkg, desc string, fields []erField, source string, sourceLen int, relsJSON []byte,
	level string, findingsJSON, old []byte) docJob {
	var in strings.Builder
	fmt.Fprintf(&in, "Object: %s %s\nPackage: %s\n", typ, name, pkg)
	if desc != "" {
		fmt.Fprintf(&in, "Description: %s\n", oneLine(desc, 300))
	}
	if level != "" {
		fmt.Fprintf(&in, "Clean Core level: %s\n", level)
	}
	var findings []Finding
	_ = json.Unmarshal(findingsJSON, &findings)
	if len(findings) > 0 {
		in.WriteString("\nSAP usages behind the level (worst first):\n")
		for _, f := range findings {
			fmt.Fprintf(&in, "- %s %s %s: level %s, %s", f.Kind, f.Type, f.Name, f.Level, f.Why)
			if len(f.Successors) > 0 {
				fmt.Fprintf(&in, " (successor %s %s)", f.Successors[0].Type, f.Successors[0].Name)
			}
			in.WriteString("\n")
		}
	}
	var rels [][]*string
	_ = json.Unmarshal(relsJSON, &rels)
	if len(rels) > 0 {
		in.WriteString("\nRelationships:\n")
		for _, rel := range rels {
			parts := make([]string, 0, 4)
			for _, p := range rel {
				if p != nil && *p != "" {
					parts = append(parts, *p)
				}
			}
			fmt.Fprintf(&in, "- %s\n", strings.Join(parts, " "))
		}
	}
	if len(fields) > 0 {
		in.WriteString("\nFields:\n")
		for i, f := range fields {
			if i == 40 {
				break
			}
			key := ""
			if f.Key {
				key = " key"
			}
			fmt.Fprintf(&in, "- %s %s%s %s\n", f.Name, f.Type, key, oneLine(f.Desc, 80))
		}
	}
	facts := "## Index facts\n\n" + in.String()
	if source != "" {
		more := ""
		if sourceLen > len([]rune(source)) {
			more = fmt.Sprintf(" (first %d of %d characters)", len([]rune(source)), sourceLen)
		}
		fmt.Fprintf(&in, "\nSource%s:\n```abap\n%s\n```\n", more, redactSecrets(source))
	}
	return docJob{kind: DocObject, subject: typ + " " + name, title: typ + " " + name, system: systemPrompt,
		user: "Write the technical documentation of this ABAP object: what it does, its inputs and outputs, " +
			"the SAP objects it depends on, and its Clean Core findings with their successors.\n\n" + in.String(),
		markdown: facts, oldHash: old}
}

// Business processes custom code takes part in, recognised by the SAP tables and APIs it
// uses. A process doc groups the packages and objects that touch it.
var processes = []struct {
	id, title string
	names     []string // SAP tables and function modules
	prefixes  []string // function module prefixes
}{
	{"order_to_cash", "Order to cash", []string{"VBAK", "VBAP", "VBEP", "VBUK", "VBUP", "LIKP", "LIPS", "VBRK", "VBRP", "KONV", "KNVV", "TVKO", "TVTW", "PRCD_ELEMENTS"},
		[]string{"BAPI_SALESORDER_", "SD_", "BAPI_BILLINGDOC_", "BAPI_OUTB_DELIVERY_"}},
	{"procure_to_pay", "Procure to pay", []string{"EKKO", "EKPO", "EKET", "EBAN", "LFA1", "LFB1", "LFM1", "RBKP", "RSEG"},
		[]string{"BAPI_PO_", "BAPI_PR_", "BAPI_INCOMINGINVOICE_", "ME_"}},
	{"record_to_report", "Record to report", []string{"BKPF", "BSEG", "ACDOCA", "SKA1", "SKAT", "SKB1", "CSKS", "CEPC", "FAGLFLEXA", "BSID", "BSIK", "BSAD", "BSAK", "T001"},
		[]string{"BAPI_ACC_", "FI_", "BAPI_GL_"}},
	{"plan_to_inventory", "Plan to inventory (materials and stock)", []string{"MARA", "MAKT", "MARC", "MARD", "MBEW", "MVKE", "MKPF", "MSEG", "MATDOC", "T001W", "T001L"},
		[]string{"BAPI_MATERIAL_", "BAPI_GOODSMVT_"}},
	{"customer_master", "Customer and business partner master data", []string{"KNA1", "KNB1", "ADRC", "BUT000", "BUT020"},
		[]string{"BAPI_CUSTOMER_", "BAPI_BUPA_"}},
}

func processOf(name string) int {
	name = strings.ToUpper(name)
	for i, p := range processes {
		for _, n := range p.names {
			if n == name {
				return i
			}
		}
		for _, pre := range p.prefixes {
			if strings.HasPrefix(name, pre) {
				return i
			}
		}
	}
	return -1
}

type processFacts struct {
	objects int64
	pkgs    map[string]int64
	touched map[string][2]int64 // SAP object -> reads/calls, writes
	listed  []string
}

// processDocs streams the relationships of custom objects to the processes' SAP objects
// (ordered, so each object's rows are consecutive) and writes one doc per process touched.
func (r *docRunner) processDocs(ctx context.Context) error {
	var names, patterns []string
	for _, p := range processes {
		names = append(names, p.names...)
		for _, pre := range p.prefixes {
			patterns = append(patterns, strings.ReplaceAll(pre, "_", `\_`)+"%")
		}
	}
	facts := make([]*processFacts, len(processes))
	seen := map[int]string{} // process -> last object counted
	err := r.db.UsagesOf(ctx, r.s.scoped(), names, patterns, func(u sapindex.ObjectUsage) error {
		to, pkg := u.To, u.Package
		i := processOf(to)
		if i < 0 {
			return nil
		}
		f := facts[i]
		if f == nil {
			f = &processFacts{pkgs: map[string]int64{}, touched: map[string][2]int64{}}
			facts[i] = f
		}
		obj := u.ObjectType + " " + u.ObjectName
		if seen[i] != obj {
			seen[i] = obj
			f.objects++
			f.pkgs[pkg]++
			if len(f.listed) < procMaxObjects {
				f.listed = append(f.listed, fmt.Sprintf("%s (package %s):", obj, pkg))
			}
		}
		c := f.touched[to]
		write := u.Usage == "write" || u.Usage == "insert" || u.Usage == "update" || u.Usage == "modify" || u.Usage == "delete"
		if write {
			c[1]++
		} else {
			c[0]++
		}
		f.touched[to] = c
		if n := len(f.listed); n > 0 && strings.HasPrefix(f.listed[n-1], obj+" ") && f.objects <= procMaxObjects {
			verb := "uses"
			if write {
				verb = "writes"
			}
			f.listed[n-1] += " " + verb + " " + to + ";"
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read process usages: %w", err)
	}
	for i, f := range facts {
		if f == nil {
			continue
		}
		p := processes[i]
		r.mu.Lock()
		r.processes = append(r.processes, p.id)
		r.mu.Unlock()
		var in strings.Builder
		fmt.Fprintf(&in, "Business process: %s\nCustom objects taking part: %d\n", p.title, f.objects)
		in.WriteString("\nSAP objects touched (uses, writes):\n")
		for _, k := range sortedKeys(f.touched) {
			c := f.touched[k]
			fmt.Fprintf(&in, "- %s (%d, %d)\n", k, c[0], c[1])
		}
		in.WriteString("\nPackages (custom objects involved):\n")
		pk := sortedKeys(f.pkgs)
		sort.SliceStable(pk, func(a, b int) bool { return f.pkgs[pk[a]] > f.pkgs[pk[b]] })
		for j, k := range pk {
			if j == procMaxPkgs {
				fmt.Fprintf(&in, "- … and %d more\n", len(pk)-j)
				break
			}
			fmt.Fprintf(&in, "- %s (%d)\n", k, f.pkgs[k])
		}
		in.WriteString("\nObjects:\n")
		for _, l := range f.listed {
			fmt.Fprintf(&in, "- %s\n", strings.TrimSuffix(l, ";"))
		}
		old, err := r.oldHash(ctx, DocBusinessProcess, p.id)
		if err != nil {
			return err
		}
		if err := r.submit(ctx, docJob{kind: DocBusinessProcess, subject: p.id, title: "Business process: " + p.title,
			system: systemPrompt,
			user: "Describe how this SAP system's custom development takes part in the business process: the steps it " +
				"supports, the packages involved, the SAP data it reads and writes, and the risks.\n\n" + in.String(),
			markdown: "## Index facts\n\n" + in.String(), oldHash: old}); err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}

// pruneDocs removes docs whose subject is gone: objects and packages no longer in the index,
// ER diagrams not confirmed by a full run, processes no custom code touches any more.
func pruneDocs(ctx context.Context, db DB, s Scope, processIDs []string) (int64, error) {
	if processIDs == nil {
		processIDs = []string{}
	}
	pruned, err := db.PruneDocs(ctx, s.scoped(), processIDs, !s.delta())
	if err != nil {
		return pruned.Removed, fmt.Errorf("prune %s: %w", pruned.Step, err)
	}
	return pruned.Removed, nil
}

// IndexDocs makes the connection's generated docs searchable in the generation: one search
// entry per doc (category "doc", object_type "DOC", object_name "<kind>:<subject>"), its
// embedding kept while the doc's text is unchanged (EmbedEntries fills the rest), and the
// entries of removed docs deleted. GenerateDocs calls it; it is idempotent.
func IndexDocs(ctx context.Context, db DB, s Scope) (int64, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	x, at := db, s.scoped()
	n, err := x.UpsertDocEntries(ctx, at)
	if err != nil {
		return 0, fmt.Errorf("index docs: %w", err)
	}
	if err := x.RemoveStaleDocEntries(ctx, at); err != nil {
		return 0, fmt.Errorf("remove entries of removed docs: %w", err)
	}
	return n, nil
}
