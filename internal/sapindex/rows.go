package sapindex

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Row is one workspace_sap_index row: an item of a phase as the connector returned it.
type Row struct {
	ObjectType  string
	ObjectName  string
	ItemKey     string // tells several items of one object in one phase apart
	Package     string
	Description string
	Data        []byte // the item, canonical JSON
	Hash        []byte // sha256 of Data
}

// Entry is one sap_search_entries row: what search finds for an object.
type Entry struct {
	Category     string
	ObjectType   string
	ObjectName   string
	Custom       bool
	Package      string
	Title        string
	Body         string
	ReleaseState string
	Hash         []byte // sha256 of what the entry says (its embedding is cached by it)
}

// Which phases produce search entries, and why the (object_type, object_name) key of an entry
// cannot collide within a generation:
//   - custom_objects: one entry per custom object (its TADIR type and name);
//   - catalog_context: one per SAP standard object custom code uses (standard names, never Z/Y);
//   - enhancements, s4_extensions: one per enhancement/extension under the TADIR type of the
//     implementing object, so an implementation that custom_objects listed already keeps that
//     entry (the writer skips an entry whose key exists: first phase wins); S/4HANA custom fields
//     have their own type CUSTOM_FIELD named TABLE-FIELD;
//   - relationships and custom_code only add index rows.
// A connector that repeats an item (in one page or across pages) does not fail the sync either:
// the writer keeps the first.

// MapItem turns one item of a phase into its index row and, for phases that produce one, its
// search entry. A malformed item (no name, wrong field types) is an error naming what is wrong;
// unknown fields are kept in the row's data and otherwise ignored.
func MapItem(phase string, item map[string]any) (Row, *Entry, error) {
	if item == nil {
		return Row{}, nil, fmt.Errorf("%s item is null", phase)
	}
	data, err := json.Marshal(item) // encoding/json sorts map keys: canonical
	if err != nil {
		return Row{}, nil, fmt.Errorf("%s item cannot be encoded: %w", phase, err)
	}
	sum := sha256.Sum256(data)
	row := Row{Data: data, Hash: sum[:]}
	f := fields{item: item}
	var entry *Entry
	switch phase {
	case PhaseCustomObjects:
		row.ObjectType, row.ObjectName = f.upper("type"), f.upper("name")
		row.Package, row.Description = f.str("package"), f.str("description")
		entry = &Entry{Custom: true, ReleaseState: f.str("release_state"),
			Body: joinText(row.Description, labelled("package", row.Package), labelled("created by", f.str("created_by")), f.str("application_component"))}
	case PhaseCatalogContext:
		row.ObjectType, row.ObjectName = f.upper("type"), f.upper("name")
		row.Package, row.Description = f.str("package"), f.str("description")
		entry = &Entry{Custom: false, ReleaseState: f.str("release_state"),
			Body: joinText(row.Description, labelled("package", row.Package), labelled("application component", f.str("application_component")),
				labelled("release state", f.str("release_state")), labelled("successor", f.str("successor")))}
	case PhaseRelationships:
		row.ObjectType, row.ObjectName = f.upper("from_type"), f.upper("from")
		to, toType := f.upper("to"), f.upper("to_type")
		if to == "" {
			f.missing("to")
		}
		row.ItemKey = strings.Join([]string{toType, to, f.str("kind"), f.str("usage"), f.str("line")}, "|")
	case PhaseCustomCode:
		row.ObjectType, row.ObjectName = f.upper("type"), f.upper("name")
		f.str("source") // validated: must be a string when present
	case PhaseEnhancements, PhaseS4Extensions:
		kind := strings.ToLower(f.str("kind"))
		row.ObjectName, row.Description = f.upper("name"), f.str("description")
		row.Package = f.str("package")
		target := f.upper("enhances")
		if phase == PhaseS4Extensions {
			target = f.upper("extends")
		}
		row.ObjectType = f.upper("type")
		if row.ObjectType == "" {
			row.ObjectType = implementingType(kind)
		}
		if kind == "custom_field" && target != "" && row.ObjectName != "" {
			row.ObjectType, row.ObjectName = "CUSTOM_FIELD", target+"-"+row.ObjectName
		}
		category := "enhancement"
		if phase == PhaseS4Extensions {
			category = "extension"
		}
		entry = &Entry{Category: category, Custom: true,
			Body: joinText(row.Description, strings.TrimSpace(strings.ReplaceAll(kind, "_", " ")+" "+labelled(verb(phase), target)), labelled("package", row.Package))}
	default:
		return Row{}, nil, fmt.Errorf("unknown index phase %q", phase)
	}
	if row.ObjectName == "" && f.err == nil {
		f.missing("name")
	}
	if row.ObjectType == "" && f.err == nil {
		f.missing("type")
	}
	if f.err != nil {
		return Row{}, nil, fmt.Errorf("%s item %s: %w", phase, short(data), f.err)
	}
	if entry != nil {
		entry.ObjectType, entry.ObjectName, entry.Package = row.ObjectType, row.ObjectName, row.Package
		if entry.Category == "" {
			entry.Category = Category(row.ObjectType, row.ObjectName)
		}
		entry.Title = row.Description
		if entry.Title == "" {
			entry.Title = row.ObjectName
		}
		h := sha256.Sum256([]byte(strings.Join([]string{entry.Category, strconv.FormatBool(entry.Custom), entry.Package, entry.Title, entry.Body, entry.ReleaseState}, "\x00")))
		entry.Hash = h[:]
	}
	return row, entry, nil
}

// Category is the search category of a TADIR object type (function modules named BAPI_* are
// "bapi"); unknown types are their own category in lower case.
func Category(objectType, name string) string {
	switch objectType {
	case "TABL", "TRANSP":
		return "table"
	case "VIEW":
		return "view"
	case "DDLS", "STOB":
		return "cds_view"
	case "FUNC":
		if strings.HasPrefix(name, "BAPI_") {
			return "bapi"
		}
		return "function"
	case "FUGR":
		return "function_group"
	case "CLAS":
		return "class"
	case "INTF":
		return "interface"
	case "PROG", "REPS":
		return "program"
	case "INCL":
		return "include"
	case "ENHO", "ENHS", "BADI", "SXCI", "SXSD", "CMOD", "SMOD":
		return "enhancement"
	case "DTEL":
		return "data_element"
	case "DOMA":
		return "domain"
	case "TRAN":
		return "transaction"
	case "MSAG":
		return "message_class"
	case "BDEF":
		return "behavior_definition"
	case "SRVD", "SRVB":
		return "service"
	case "DDLX":
		return "metadata_extension"
	case "DCLS":
		return "access_control"
	case "CUSTOM_FIELD":
		return "extension"
	}
	return strings.ToLower(objectType)
}

// implementingType is the TADIR type of an enhancement or extension the item did not type.
func implementingType(kind string) string {
	switch kind {
	case "badi":
		return "ENHO"
	case "user_exit":
		return "INCL"
	case "append", "key_user_field":
		return "TABL"
	case "cds_extension":
		return "DDLS"
	}
	return strings.ToUpper(kind)
}

func verb(phase string) string {
	if phase == PhaseS4Extensions {
		return "extends"
	}
	return "enhances"
}

// fields reads an item's fields, remembering the first one of a wrong type.
type fields struct {
	item map[string]any
	err  error
}

func (f *fields) str(key string) string {
	switch v := f.item[key].(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case json.Number:
		return v.String()
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case bool:
		return strconv.FormatBool(v)
	default:
		if f.err == nil {
			f.err = fmt.Errorf("field %q is a %T, not a string", key, v)
		}
		return ""
	}
}

func (f *fields) upper(key string) string { return strings.ToUpper(f.str(key)) }

func (f *fields) missing(key string) {
	if f.err == nil {
		f.err = fmt.Errorf("field %q is missing", key)
	}
}

// labelled is "label value", or nothing without a value.
func labelled(label, v string) string {
	if v == "" {
		return ""
	}
	return label + " " + v
}

func joinText(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(". ")
		}
		b.WriteString(p)
	}
	return b.String()
}

func short(data []byte) string {
	if len(data) > 120 {
		return string(data[:120]) + "…"
	}
	return string(data)
}
