package sapbackend

import (
	"context"
	"sort"

	"github.com/sapagent/sapagent/internal/abapref"
	"github.com/sapagent/sapagent/internal/cleancore"
	"github.com/sapagent/sapagent/internal/connector"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/soaprfc"
)

// releaseState is a standard object's Clean Core state and first successor from the
// Cloudification Repository the platform ships; "unknown" when it does not list the object.
func releaseState(typ, name string) (string, string) {
	if r, err := cleancore.Default(); err == nil {
		if e, ok := r.Lookup(typ, name); ok {
			return e.IndexState()
		}
	}
	return "unknown", ""
}

// IndexCatalogContext lists the system's standard objects: TADIR's R3TR entries that are not
// the customer's (function groups and packages left out: their function modules come from
// TFDIR), then TFDIR's standard function modules. Both are read without a WHERE, so a page is
// an offset read; customer rows are dropped on the connector.
func (b *Backend) IndexCatalogContext(ctx context.Context, cred connector.Credentials, req sap.IndexRequest) (*sap.IndexPage, error) {
	return b.indexPage(ctx, cred, b.catalogPhase(), req)
}

func (b *Backend) catalogPhase() *phase {
	return &phase{endpoint: sap.EndpointIndexCatalogContext,
		sections: []section{
			{table: "TADIR", fields: []string{"PGMID", "OBJECT", "OBJ_NAME", "DEVCLASS"}, name: "OBJ_NAME",
				key: func(r soaprfc.Struct) string {
					return trimmed(r, "PGMID") + "/" + trimmed(r, "OBJECT") + "/" + trimmed(r, "OBJ_NAME")
				},
				build: func(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, rows []soaprfc.Struct) ([][]map[string]any, error) {
					refs := make([]objRef, len(rows))
					for i, r := range rows {
						refs[i] = objRef{typ: trimmed(r, "OBJECT"), name: trimmed(r, "OBJ_NAME"), pkg: trimmed(r, "DEVCLASS")}
						refs[i].skip = trimmed(r, "PGMID") != "R3TR" || refs[i].typ == "FUGR" || refs[i].typ == "DEVC" || b.isCustom(refs[i].name, refs[i].pkg)
					}
					return b.catalogItems(ctx, c, cred, refs)
				}},
			{table: "TFDIR", fields: []string{"FUNCNAME", "PNAME"}, name: "FUNCNAME",
				key: func(r soaprfc.Struct) string { return trimmed(r, "FUNCNAME") },
				build: func(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, rows []soaprfc.Struct) ([][]map[string]any, error) {
					refs := make([]objRef, len(rows))
					for i, r := range rows {
						refs[i] = objRef{typ: "FUNC", name: trimmed(r, "FUNCNAME"), group: groupOfProgram(r["PNAME"])}
						refs[i].skip = b.isCustom(refs[i].name, "")
					}
					return b.catalogItems(ctx, c, cred, refs)
				}},
		},
		deltaNames: func(ch sap.Change) (string, bool) { return ch.ObjectName, !b.isCustom(ch.ObjectName, "") }}
}

// catalogItems: {type, name, description, package, application_component, release_state,
// successor}; the component is the package's (TDEVC-COMPONENT, named by DF14L-PS_POSID).
func (b *Backend) catalogItems(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, refs []objRef) ([][]map[string]any, error) {
	byType := map[string][]string{}
	var groups []string
	for _, o := range refs {
		if o.skip {
			continue
		}
		if _, ok := textTables[o.typ]; ok {
			byType[o.typ] = append(byType[o.typ], o.name)
		}
		if o.typ == "FUNC" {
			groups = append(groups, o.group)
		}
	}
	// Texts and packages are independent look-ups: in parallel.
	var texts, comp map[string]string
	err := b.parallel(ctx, 2, func(ctx context.Context, i int) (err error) {
		if i == 0 {
			texts, err = b.texts(ctx, c, cred, byType)
			return err
		}
		comp, err = b.packagesOf(ctx, c, cred, refs, groups)
		return err
	})
	if err != nil {
		return nil, err
	}
	return perObject(refs, nil, func(o objRef) ([]map[string]any, error) {
		state, succ := releaseState(o.typ, o.name)
		return []map[string]any{{"type": o.typ, "name": o.name, "description": texts[o.typ+"/"+o.name], "package": o.pkg,
			"application_component": comp[o.pkg], "release_state": state, "successor": succ}}, nil
	})
}

// packagesOf fills in function modules' packages (their group's TADIR entry) and returns the
// application component of each package of refs.
func (b *Backend) packagesOf(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, refs []objRef, groups []string) (map[string]string, error) {
	groupPkg := map[string]string{}
	var rows []soaprfc.Struct
	err := b.slot(ctx, func() (err error) {
		rows, err = optional(lookup(ctx, c, cred, "TADIR", []string{"OBJ_NAME", "DEVCLASS"}, "OBJ_NAME", groups, "PGMID = 'R3TR' AND OBJECT = 'FUGR'"))
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		groupPkg[trimmed(r, "OBJ_NAME")] = trimmed(r, "DEVCLASS")
	}
	var pkgs []string
	for i := range refs {
		if refs[i].typ == "FUNC" {
			refs[i].pkg = groupPkg[refs[i].group]
		}
		if !refs[i].skip {
			pkgs = append(pkgs, refs[i].pkg)
		}
	}
	var comp map[string]string
	err = b.slot(ctx, func() (err error) {
		comp, err = b.components(ctx, c, cred, pkgs)
		return err
	})
	return comp, err
}

// texts reads the short texts of objects by type from their text tables (TYPE/NAME -> text),
// one look-up per text table (classes and interfaces share SEOCLASSTX).
func (b *Backend) texts(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, byType map[string][]string) (map[string]string, error) {
	out := map[string]string{}
	lang := soaprfc.QuoteLiteral(languageKey(b.sys.Language))
	byTable := map[[4]string]map[string][]string{} // text table -> name -> the types asking
	for typ, names := range byType {
		tt := textTables[typ]
		if byTable[tt] == nil {
			byTable[tt] = map[string][]string{}
		}
		for _, n := range names {
			byTable[tt][n] = append(byTable[tt][n], typ)
		}
	}
	tables := make([][4]string, 0, len(byTable))
	for tt := range byTable {
		tables = append(tables, tt)
	}
	// The text tables are independent reads: in parallel, each in its own work process.
	found := make([][]soaprfc.Struct, len(tables))
	err := b.parallel(ctx, len(tables), func(ctx context.Context, i int) error {
		tt, types := tables[i], byTable[tables[i]]
		names := make([]string, 0, len(types))
		for n := range types {
			names = append(names, n)
		}
		sort.Strings(names) // the same request for the same page
		return b.slot(ctx, func() (err error) {
			found[i], err = optional(lookup(ctx, c, cred, tt[0], []string{tt[1], tt[3]}, tt[1], names, tt[2]+" = "+lang))
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	for i, tt := range tables {
		for _, r := range found[i] {
			name := trimmed(r, tt[1])
			for _, typ := range byTable[tt][name] {
				out[typ+"/"+name] = trimmed(r, tt[3])
			}
		}
	}
	return out, nil
}

// components maps packages to their application component (TDEVC, DF14L).
func (b *Backend) components(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, pkgs []string) (map[string]string, error) {
	out := map[string]string{}
	rows, err := optional(lookup(ctx, c, cred, "TDEVC", []string{"DEVCLASS", "COMPONENT"}, "DEVCLASS", pkgs, ""))
	if err != nil || len(rows) == 0 {
		return out, err
	}
	ids := map[string][]string{}
	var keys []string
	for _, r := range rows {
		if id := trimmed(r, "COMPONENT"); id != "" {
			ids[id] = append(ids[id], trimmed(r, "DEVCLASS"))
			keys = append(keys, id)
		}
	}
	comps, err := optional(lookup(ctx, c, cred, "DF14L", []string{"FCTR_ID", "PS_POSID"}, "FCTR_ID", keys, "AS4LOCAL = 'A'"))
	if err != nil {
		return nil, err
	}
	for _, r := range comps {
		for _, p := range ids[trimmed(r, "FCTR_ID")] {
			out[p] = trimmed(r, "PS_POSID")
		}
	}
	return out, nil
}

// IndexEnhancements lists the customer's enhancement implementations (ENHHEADER, what they
// enhance from ENHOBJ), append structures (DD02L TABCLASS APPEND, the table in SQLTAB) and CMOD
// projects (MODACT: the SAP enhancement each uses).
func (b *Backend) IndexEnhancements(ctx context.Context, cred connector.Credentials, req sap.IndexRequest) (*sap.IndexPage, error) {
	return b.indexPage(ctx, cred, b.enhancementPhase(), req)
}

func (b *Backend) enhancementPhase() *phase {
	return &phase{endpoint: sap.EndpointIndexEnhancements, countable: true,
		sections: []section{
			{table: "ENHHEADER", fields: []string{"ENHNAME", "ENHTOOLTYPE"}, where: and("VERSION = 'A'", b.customWhere("ENHNAME", "")), name: "ENHNAME",
				key: func(r soaprfc.Struct) string { return trimmed(r, "ENHNAME") },
				build: func(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, rows []soaprfc.Struct) ([][]map[string]any, error) {
					var names []string
					for _, r := range rows {
						names = append(names, trimmed(r, "ENHNAME"))
					}
					objs, err := optional(lookup(ctx, c, cred, "ENHOBJ", []string{"ENHNAME", "MAINNAME"}, "ENHNAME", names, "VERSION = 'A'"))
					if err != nil {
						return nil, err
					}
					enhances := map[string]string{}
					for _, o := range objs {
						enhances[trimmed(o, "ENHNAME")] = trimmed(o, "MAINNAME")
					}
					out := make([][]map[string]any, len(rows))
					for i, r := range rows {
						kind := "enhancement"
						if trimmed(r, "ENHTOOLTYPE") == "BADI_IMPL" {
							kind = "badi"
						}
						out[i] = []map[string]any{{"type": "ENHO", "kind": kind, "name": names[i], "enhances": enhances[names[i]], "description": ""}}
					}
					return out, nil
				}},
			{table: "DD02L", fields: []string{"TABNAME", "SQLTAB"}, name: "TABNAME",
				where: and("AS4LOCAL = 'A' AND TABCLASS = 'APPEND'", b.customWhere("TABNAME", ""), "TABNAME NOT LIKE 'YY1_%'"),
				key:   func(r soaprfc.Struct) string { return trimmed(r, "TABNAME") },
				build: func(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, rows []soaprfc.Struct) ([][]map[string]any, error) {
					return b.appendItems(ctx, c, cred, rows, "append", "enhances")
				}},
			{table: "MODACT", fields: []string{"NAME", "MEMBER"}, where: b.customWhere("NAME", ""), name: "NAME",
				key: func(r soaprfc.Struct) string { return trimmed(r, "NAME") + "/" + trimmed(r, "MEMBER") },
				build: func(_ context.Context, _ *soaprfc.Client, _ connector.Credentials, rows []soaprfc.Struct) ([][]map[string]any, error) {
					out := make([][]map[string]any, len(rows))
					for i, r := range rows {
						if m := trimmed(r, "MEMBER"); m != "" {
							out[i] = []map[string]any{{"type": "CMOD", "kind": "user_exit", "name": trimmed(r, "NAME"), "enhances": m, "description": ""}}
						}
					}
					return out, nil
				}},
		},
		deltaNames: func(ch sap.Change) (string, bool) { return ch.ObjectName, true }}
}

// appendItems are append structures (kind append, or key_user_field for YY1_ ones) with the
// table they extend and their text.
func (b *Backend) appendItems(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, rows []soaprfc.Struct, kind, field string) ([][]map[string]any, error) {
	var names []string
	for _, r := range rows {
		names = append(names, trimmed(r, "TABNAME"))
	}
	texts, err := b.texts(ctx, c, cred, map[string][]string{"TABL": names})
	if err != nil {
		return nil, err
	}
	out := make([][]map[string]any, len(rows))
	for i, n := range names {
		out[i] = []map[string]any{{"type": "TABL", "kind": kind, "name": n, field: trimmed(rows[i], "SQLTAB"), "description": texts["TABL/"+n]}}
	}
	return out, nil
}

// IndexS4Extensions lists key-user extensions of an S/4HANA system: YY1_ append structures
// (key_user_field), customer CDS views that extend a view (cds_extension, from their source
// through ADT) and YY1_ fields of SAP tables (custom_field, DD03L). ECC: NOT_SUPPORTED.
func (b *Backend) IndexS4Extensions(ctx context.Context, cred connector.Credentials, req sap.IndexRequest) (*sap.IndexPage, error) {
	b.typeMu.Lock()
	typ := b.systemType
	b.typeMu.Unlock()
	if typ == "" {
		si, err := b.SystemInfo(ctx, cred, sap.SystemInfoRequest{})
		if err != nil {
			return nil, err
		}
		typ = si.SystemType
	}
	if typ != "S4HANA" {
		return nil, connector.NotSupported("S/4HANA extensions exist only on S/4HANA systems; %s is %s (CVERS)", b.sys.ID, typeOrUnknown(typ))
	}
	return b.indexPage(ctx, cred, b.s4Phase(), req)
}

func typeOrUnknown(t string) string {
	if t == "" {
		return "of unknown type"
	}
	return t
}

func (b *Backend) s4Phase() *phase {
	return &phase{endpoint: sap.EndpointIndexS4Extensions,
		sections: []section{
			{table: "DD02L", fields: []string{"TABNAME", "SQLTAB"}, name: "TABNAME", where: "AS4LOCAL = 'A' AND TABCLASS = 'APPEND' AND TABNAME LIKE 'YY1_%'",
				key: func(r soaprfc.Struct) string { return trimmed(r, "TABNAME") },
				build: func(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, rows []soaprfc.Struct) ([][]map[string]any, error) {
					return b.appendItems(ctx, c, cred, rows, "key_user_field", "extends")
				}},
			{table: "TADIR", fields: []string{"OBJ_NAME", "DEVCLASS"}, name: "OBJ_NAME", where: and("PGMID = 'R3TR' AND OBJECT = 'DDLS'", b.customWhere("OBJ_NAME", "DEVCLASS")),
				key: func(r soaprfc.Struct) string { return trimmed(r, "OBJ_NAME") },
				build: func(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, rows []soaprfc.Struct) ([][]map[string]any, error) {
					var names []string
					for _, r := range rows {
						names = append(names, trimmed(r, "OBJ_NAME"))
					}
					texts, err := b.texts(ctx, c, cred, map[string][]string{"DDLS": names})
					if err != nil {
						return nil, err
					}
					refs := make([]objRef, len(names))
					idx := make([]int, len(names))
					for i, n := range names {
						refs[i], idx[i] = objRef{typ: "DDLS", name: n}, i
					}
					srcs, err := b.readSources(ctx, cred, refs, idx)
					if err != nil {
						return nil, err
					}
					out := make([][]map[string]any, len(rows))
					for i, n := range names {
						if !srcs[i].ok {
							continue
						}
						for _, r := range abapref.Extract("DDLS", srcs[i].src) {
							if r.Kind == abapref.Extend {
								out[i] = []map[string]any{{"type": "DDLS", "kind": "cds_extension", "name": n, "extends": r.Name, "description": texts["DDLS/"+n]}}
								break
							}
						}
					}
					return out, nil
				}},
			{table: "DD03L", fields: []string{"TABNAME", "FIELDNAME", "ROLLNAME"}, name: "TABNAME",
				where: "AS4LOCAL = 'A' AND FIELDNAME LIKE 'YY1_%' AND TABNAME NOT LIKE 'YY1_%'",
				key:   func(r soaprfc.Struct) string { return trimmed(r, "TABNAME") + "-" + trimmed(r, "FIELDNAME") },
				build: func(_ context.Context, _ *soaprfc.Client, _ connector.Credentials, rows []soaprfc.Struct) ([][]map[string]any, error) {
					out := make([][]map[string]any, len(rows))
					for i, r := range rows {
						// The field's text is its data element's (DD04T), which is not read: description stays empty.
						out[i] = []map[string]any{{"type": "FIELD", "kind": "custom_field", "name": trimmed(r, "FIELDNAME"), "extends": trimmed(r, "TABNAME"), "description": ""}}
					}
					return out, nil
				}},
		},
		deltaNames: func(ch sap.Change) (string, bool) { return ch.ObjectName, true }}
}
