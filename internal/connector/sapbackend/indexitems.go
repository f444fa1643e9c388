package sapbackend

import (
	"context"
	"errors"
	"strings"

	"github.com/sapagent/sapagent/internal/abapref"
	"github.com/sapagent/sapagent/internal/connector"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/soaprfc"
)

// pageInfo is what a page's objects need from SAP's tables, read in one look-up per table.
type pageInfo struct {
	progs  map[string]soaprfc.Struct // REPOSRC by program name
	texts  map[string]string         // TYPE/NAME -> short text
	groups map[string]soaprfc.Struct // TADIR of function groups, by name
	tables map[string]soaprfc.Struct // DD02L by table name
}

// textTables are the text table of each TADIR type: table, name field, language field, text field.
var textTables = map[string][4]string{
	"PROG": {"TRDIRT", "NAME", "SPRSL", "TEXT"},
	"CLAS": {"SEOCLASSTX", "CLSNAME", "LANGU", "DESCRIPT"},
	"INTF": {"SEOCLASSTX", "CLSNAME", "LANGU", "DESCRIPT"},
	"FUGR": {"TLIBT", "AREA", "SPRAS", "AREAT"},
	"FUNC": {"TFTIT", "FUNCNAME", "SPRAS", "STEXT"},
	"TABL": {"DD02T", "TABNAME", "DDLANGUAGE", "DDTEXT"},
	"DDLS": {"DDDDLSRCT", "DDLNAME", "DDLANGUAGE", "DDTEXT"},
	"DTEL": {"DD04T", "ROLLNAME", "DDLANGUAGE", "DDTEXT"},
	"DOMA": {"DD01T", "DOMNAME", "DDLANGUAGE", "DDTEXT"},
}

// optional turns a missing authorization (or a table the release lacks) into no rows: a text
// or a date is left empty rather than failing the page.
func optional(rows []soaprfc.Struct, err error) ([]soaprfc.Struct, error) {
	var se *sap.Error
	if errors.As(err, &se) && (se.Code == sap.ErrAuthorization || se.Code == sap.ErrNotFound) {
		return nil, nil
	}
	return rows, err
}

// info reads what a page's objects need: REPOSRC (program type, author, last change), texts,
// function groups' TADIR entries, DD02L of tables. FUNC objects without their group get it from TFDIR.
func (b *Backend) info(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, refs []objRef, wantTexts bool) (*pageInfo, error) {
	pi := &pageInfo{progs: map[string]soaprfc.Struct{}, texts: map[string]string{}, groups: map[string]soaprfc.Struct{}, tables: map[string]soaprfc.Struct{}}
	var fms []string
	for _, o := range refs {
		if o.typ == "FUNC" && o.group == "" && !o.skip {
			fms = append(fms, o.name)
		}
	}
	if len(fms) > 0 {
		rows, err := lookup(ctx, c, cred, "TFDIR", []string{"FUNCNAME", "PNAME", "INCLUDE"}, "FUNCNAME", fms, "")
		if err != nil {
			return nil, err
		}
		byName := map[string]soaprfc.Struct{}
		for _, r := range rows {
			byName[trimmed(r, "FUNCNAME")] = r
		}
		for i := range refs {
			if r, ok := byName[refs[i].name]; ok && refs[i].typ == "FUNC" {
				refs[i].group, refs[i].include = groupOfProgram(r["PNAME"]), trimmed(r, "INCLUDE")
			}
		}
	}
	var progs, groups, tables []string
	byType := map[string][]string{}
	for _, o := range refs {
		if o.skip {
			continue
		}
		if p := o.program(); p != "" {
			progs = append(progs, p)
		}
		if o.typ == "FUNC" {
			groups = append(groups, o.group)
		}
		if o.typ == "TABL" {
			tables = append(tables, o.name)
		}
		if _, ok := textTables[o.typ]; ok && wantTexts {
			byType[o.typ] = append(byType[o.typ], o.name)
		}
	}
	rows, err := optional(lookup(ctx, c, cred, "REPOSRC", []string{"PROGNAME", "SUBC", "CNAM", "UNAM", "UDAT", "UTIME"}, "PROGNAME", progs, "R3STATE = 'A'"))
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		pi.progs[trimmed(r, "PROGNAME")] = r
	}
	if rows, err = optional(lookup(ctx, c, cred, "TADIR", []string{"OBJ_NAME", "DEVCLASS", "AUTHOR", "CREATED_ON"}, "OBJ_NAME", groups, "PGMID = 'R3TR' AND OBJECT = 'FUGR'")); err != nil {
		return nil, err
	}
	for _, r := range rows {
		pi.groups[trimmed(r, "OBJ_NAME")] = r
	}
	if rows, err = optional(lookup(ctx, c, cred, "DD02L", []string{"TABNAME", "TABCLASS", "SQLTAB", "AS4USER", "AS4DATE"}, "TABNAME", tables, "AS4LOCAL = 'A'")); err != nil {
		return nil, err
	}
	for _, r := range rows {
		pi.tables[trimmed(r, "TABNAME")] = r
	}
	texts, err := b.texts(ctx, c, cred, byType)
	if err != nil {
		return nil, err
	}
	pi.texts = texts
	return pi, nil
}

// resolve fills in what the page learnt: a program that is an include is INCL; a function
// module's package and author are its group's.
func (pi *pageInfo) resolve(o *objRef) {
	if p, ok := pi.progs[o.program()]; ok && o.typ == "PROG" && trimmed(p, "SUBC") == "I" {
		o.typ = "INCL"
	}
	if o.typ == "FUNC" {
		if g, ok := pi.groups[o.group]; ok {
			o.pkg, o.author, o.created = trimmed(g, "DEVCLASS"), trimmed(g, "AUTHOR"), trimmed(g, "CREATED_ON")
		}
		if p, ok := pi.progs[o.program()]; ok && trimmed(p, "CNAM") != "" {
			o.author = trimmed(p, "CNAM")
		}
	}
}

// changedAt is the object's last change: its program's REPOSRC UDAT, a table's DD02L AS4DATE,
// otherwise TADIR's creation date.
func (pi *pageInfo) changedAt(o objRef) string {
	if p, ok := pi.progs[o.program()]; ok {
		if d := sapDate(p["UDAT"]); d != "" {
			return d
		}
	}
	if t, ok := pi.tables[o.name]; ok && o.typ == "TABL" {
		if d := sapDate(t["AS4DATE"]); d != "" {
			return d
		}
	}
	return sapDate(o.created)
}

func (pi *pageInfo) text(o objRef) string {
	typ := o.typ
	if typ == "INCL" {
		typ = "PROG"
	}
	return pi.texts[typ+"/"+o.name]
}

// customObjectItems: {type, name, description, package, created_by, changed_at}.
func (b *Backend) customObjectItems(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, refs []objRef) ([][]map[string]any, error) {
	pi, err := b.info(ctx, c, cred, refs, true)
	if err != nil {
		return nil, err
	}
	return perObject(refs, pi, func(o objRef) ([]map[string]any, error) {
		return []map[string]any{{"type": o.typ, "name": o.name, "description": pi.text(o), "package": o.pkg, "created_by": o.author, "changed_at": pi.changedAt(o)}}, nil
	})
}

// perObject builds each object's items, leaving out those that are not the customer's after all;
// with pi, each object first gets what the page learnt about it.
func perObject(refs []objRef, pi *pageInfo, items func(o objRef) ([]map[string]any, error)) ([][]map[string]any, error) {
	out := make([][]map[string]any, len(refs))
	for i, o := range refs {
		if o.skip {
			continue
		}
		if pi != nil {
			pi.resolve(&o)
		}
		its, err := items(o)
		if err != nil {
			return nil, err
		}
		out[i] = its
	}
	return out, nil
}

// customCodeItems: {type, name, source, lines}.
func (b *Backend) customCodeItems(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, refs []objRef) ([][]map[string]any, error) {
	pi, err := b.info(ctx, c, cred, refs, false)
	if err != nil {
		return nil, err
	}
	var idx []int
	for i := range refs {
		if !refs[i].skip {
			pi.resolve(&refs[i])
			idx = append(idx, i)
		}
	}
	srcs, err := b.readSources(ctx, cred, refs, idx)
	if err != nil {
		return nil, err
	}
	out := make([][]map[string]any, len(refs))
	for _, i := range idx {
		if s := srcs[i]; s.ok {
			out[i] = []map[string]any{{"type": refs[i].typ, "name": refs[i].name, "source": s.src, "lines": strings.Count(s.src, "\n") + 1}}
		}
	}
	return out, nil
}

// alternatives are the TADIR types a reference typed from source alone may really have.
var alternatives = map[string][]string{"TABL": {"DDLS"}, "DDLS": {"TABL"}, "CLAS": {"INTF"}, "INTF": {"CLAS"}, "TYPE": {"TABL", "DTEL", "DDLS", "TTYP"}}

// resolveTypes asks TADIR which types the referenced names have: abapref cannot tell a data
// element from a structure (TYPE), nor a CDS entity from a table by syntax alone.
func (b *Backend) resolveTypes(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, refs []abapref.Ref) (func(typ, name string) string, error) {
	var names []string
	for _, r := range refs {
		if _, ok := alternatives[r.Type]; ok {
			names = append(names, r.Name)
		}
	}
	rows, err := optional(lookup(ctx, c, cred, "TADIR", []string{"OBJECT", "OBJ_NAME"}, "OBJ_NAME", names, "PGMID = 'R3TR'"))
	if err != nil {
		return nil, err
	}
	has := map[string]bool{}
	for _, r := range rows {
		has[trimmed(r, "OBJECT")+"/"+trimmed(r, "OBJ_NAME")] = true
	}
	return func(typ, name string) string {
		alts, ok := alternatives[typ]
		if !ok {
			return typ
		}
		if typ != "TYPE" && has[typ+"/"+name] {
			return typ
		}
		for _, t := range alts {
			if has[t+"/"+name] {
				return t
			}
		}
		return typ
	}, nil
}

// relationshipItems: {from_type, from, to_type, to, kind, usage, line}, one per (to_type, to,
// usage), from the object's source (abapref, as the simulator indexes); enhancement
// implementations add the BAdI they implement (ENHOBJ), appends the table they extend (DD02L).
// Without ADT the where-used tables give what a source would (WBCROSSGT, CROSS; no lines).
func (b *Backend) relationshipItems(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, refs []objRef) ([][]map[string]any, error) {
	pi, err := b.info(ctx, c, cred, refs, false)
	if err != nil {
		return nil, err
	}
	_, adtErr := b.adtClient(sap.EndpointABAPSource)
	type extracted struct {
		refs []abapref.Ref
		ok   bool
	}
	ex := make([]extracted, len(refs))
	var all []abapref.Ref
	var enhos, crossObjs, withSource []int
	for i := range refs {
		o := &refs[i]
		if o.skip {
			continue
		}
		pi.resolve(o)
		switch {
		case o.typ == "ENHO":
			enhos = append(enhos, i)
		case o.typ == "TABL":
		case adtErr != nil:
			crossObjs = append(crossObjs, i)
		default:
			withSource = append(withSource, i)
		}
	}
	srcs, err := b.readSources(ctx, cred, refs, withSource)
	if err != nil {
		return nil, err
	}
	for _, i := range withSource {
		if srcs[i].ok {
			ex[i] = extracted{abapref.Extract(refs[i].typ, srcs[i].src), true}
			all = append(all, ex[i].refs...)
		}
	}
	out := make([][]map[string]any, len(refs))
	if len(crossObjs) > 0 {
		if err := b.crossRelationships(ctx, c, cred, refs, crossObjs, out); err != nil {
			return nil, err
		}
	}
	resolve, err := b.resolveTypes(ctx, c, cred, all)
	if err != nil {
		return nil, err
	}
	var enhNames []string
	for _, i := range enhos {
		enhNames = append(enhNames, refs[i].name)
	}
	enhRows, err := optional(lookup(ctx, c, cred, "ENHOBJ", []string{"ENHNAME", "MAINTYPE", "MAINNAME"}, "ENHNAME", enhNames, "VERSION = 'A'"))
	if err != nil {
		return nil, err
	}
	enhOf := map[string]soaprfc.Struct{}
	for _, r := range enhRows {
		enhOf[trimmed(r, "ENHNAME")] = r
	}
	for i, o := range refs {
		if o.skip || out[i] != nil {
			continue
		}
		items := []map[string]any{}
		seen := map[string]bool{}
		add := func(toType, to, kind, usage string, line int) {
			key := toType + "/" + to + "/" + usage
			if seen[key] || (to == o.name && toType == o.typ) {
				return
			}
			seen[key] = true
			items = append(items, map[string]any{"from_type": o.typ, "from": o.name, "to_type": toType, "to": to, "kind": kind, "usage": usage, "line": line})
		}
		for _, r := range ex[i].refs {
			typ := resolve(r.Type, r.Name)
			add(typ, r.Name, sap.RelationKind(string(r.Kind), typ), string(r.Kind), r.Line)
		}
		switch o.typ {
		case "ENHO":
			if r, ok := enhOf[o.name]; ok {
				if trimmed(r, "MAINTYPE") == "BADI" {
					add("BADI", trimmed(r, "MAINNAME"), "implements_badi", "implement", 0)
				} else {
					add(trimmed(r, "MAINTYPE"), trimmed(r, "MAINNAME"), "extends", "enhancement", 0)
				}
			}
		case "TABL":
			if t, ok := pi.tables[o.name]; ok && trimmed(t, "TABCLASS") == "APPEND" && trimmed(t, "SQLTAB") != "" {
				add("TABL", trimmed(t, "SQLTAB"), "extends", "extend", 0)
			}
		}
		out[i] = items
	}
	return out, nil
}

// crossRelationships reads the where-used tables for objects whose source cannot be read: the
// rows whose INCLUDE is the object's program (a class's: any include of its pool).
func (b *Backend) crossRelationships(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, refs []objRef, idx []int, out [][]map[string]any) error {
	for _, i := range idx {
		o := refs[i]
		prog := o.program()
		if prog == "" {
			continue
		}
		where := "INCLUDE = " + soaprfc.QuoteLiteral(prog)
		if o.typ == "CLAS" || o.typ == "INTF" {
			where = "INCLUDE LIKE " + soaprfc.QuoteLiteral(strings.TrimSuffix(strings.TrimSuffix(prog, "CP"), "IP")+"%")
		}
		items := []map[string]any{}
		seen := map[string]bool{}
		add := func(toType, to, kind, usage string) {
			if k := toType + "/" + to + "/" + usage; !seen[k] && to != o.name {
				seen[k] = true
				items = append(items, map[string]any{"from_type": o.typ, "from": o.name, "to_type": toType, "to": to, "kind": kind, "usage": usage, "line": 0})
			}
		}
		gt, err := optional(read(ctx, c, cred, "WBCROSSGT", []string{"OTYPE", "NAME"}, and(where, "OTYPE = 'TY'"), 0, crossRowLimit))
		if err != nil {
			return err
		}
		var names []abapref.Ref
		for _, r := range gt {
			names = append(names, abapref.Ref{Type: "TYPE", Name: trimmed(r, "NAME")})
		}
		resolve, err := b.resolveTypes(ctx, c, cred, names)
		if err != nil {
			return err
		}
		for _, r := range names {
			typ := resolve("TYPE", r.Name)
			add(typ, r.Name, sap.RelationKind(string(abapref.TypeUse), typ), string(abapref.TypeUse))
		}
		cr, err := optional(read(ctx, c, cred, "CROSS", []string{"TYPE", "NAME"}, and(where, "TYPE IN ( 'F', 'R' )"), 0, crossRowLimit))
		if err != nil {
			return err
		}
		for _, r := range cr {
			typ := "FUNC"
			if trimmed(r, "TYPE") == "R" {
				typ = "PROG"
			}
			add(typ, trimmed(r, "NAME"), sap.RelationKind(string(abapref.Call), typ), string(abapref.Call))
		}
		out[i] = items
	}
	return nil
}
