package sapsim

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/sapagent/sapagent/internal/sap"
)

// LoadABAPGit adds a customer's custom code from an abapGit folder (its src/ directory or the
// repository root): programs (*.prog.abap), classes (*.clas.abap), interfaces (*.intf.abap),
// function groups (*.fugr.*.abap, one function module per *.fugr.<name>.abap that starts with
// FUNCTION), tables (*.tabl.xml) and CDS views (*.ddls.asddls). Loaded objects are searchable,
// have source and where-used, appear in the index phases, and their tables can be read.
func (s *System) LoadABAPGit(dir string) error {
	s.init()
	src := dir
	if st, err := os.Stat(filepath.Join(dir, "src")); err == nil && st.IsDir() {
		src = filepath.Join(dir, "src")
	}
	var files []string
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("abapGit folder %s: %w", dir, err)
	}
	sort.Strings(files)
	var objs []*object
	var tables []*table
	for _, path := range files {
		base := strings.ToLower(filepath.Base(path))
		parts := strings.Split(base, ".")
		if len(parts) < 3 {
			continue
		}
		name := strings.ToUpper(strings.ReplaceAll(parts[0], "#", "/"))
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := string(raw)
		pkg := "$" + strings.ToUpper(filepath.Base(filepath.Dir(path)))
		switch {
		case parts[1] == "prog" && parts[len(parts)-1] == "abap" && len(parts) == 3:
			objs = append(objs, &object{Type: "PROG", Name: name, Description: firstComment(text, name), Package: pkg, CreatedBy: "ABAPGIT", ChangedAt: "2026-01-01", Source: text})
		case parts[1] == "clas" && parts[len(parts)-1] == "abap" && len(parts) == 3:
			objs = append(objs, &object{Type: "CLAS", Name: name, Description: firstComment(text, name), Package: pkg, CreatedBy: "ABAPGIT", ChangedAt: "2026-01-01", Source: text})
		case parts[1] == "intf" && parts[len(parts)-1] == "abap":
			objs = append(objs, &object{Type: "INTF", Name: name, Description: firstComment(text, name), Package: pkg, CreatedBy: "ABAPGIT", ChangedAt: "2026-01-01", Source: text})
		case parts[1] == "ddls" && parts[len(parts)-1] == "asddls":
			objs = append(objs, &object{Type: "DDLS", Name: name, Description: firstComment(text, name), Package: pkg, CreatedBy: "ABAPGIT", ChangedAt: "2026-01-01", Source: text})
		case parts[1] == "fugr" && parts[len(parts)-1] == "abap" && len(parts) == 4:
			body := strings.TrimSpace(text)
			if strings.HasPrefix(strings.ToUpper(body), "FUNCTION ") {
				fm := strings.ToUpper(strings.TrimSuffix(strings.Fields(body)[1], "."))
				objs = append(objs, &object{Type: "FUNC", Name: fm, Group: name, Description: "Function module of " + name, Package: pkg, CreatedBy: "ABAPGIT", ChangedAt: "2026-01-01", Source: text})
			}
		case parts[1] == "tabl" && parts[len(parts)-1] == "xml":
			t, o, err := parseTabl(text, s.info.SystemType)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			o.Package = pkg
			tables = append(tables, t)
			objs = append(objs, o)
		}
	}
	if len(objs) == 0 {
		return fmt.Errorf("no abapGit objects found in %s", dir)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range tables {
		s.tables[t.schema.Table] = t
	}
	for _, o := range objs {
		s.objects[o.Type+"/"+o.Name] = o
		if o.Type == "FUNC" {
			s.funcs[o.Name] = &function{iface: sapFunctionInterface(o), run: customFunction(o.Name)}
		}
		o.Seq = s.logChange(o.Type, o.Name, "created", "ABAPGIT")
	}
	for _, o := range objs {
		s.prepare(o)
	}
	s.rebuildKeys()
	return nil
}

// firstComment is the first comment line of a source, used as its description.
func firstComment(src, fallback string) string {
	for _, line := range strings.Split(src, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "*") || strings.HasPrefix(t, "\"") {
			t = strings.TrimSpace(strings.Trim(t, "*\"-& "))
			if t != "" {
				return t
			}
		}
	}
	return fallback
}

// abapGit's table serialisation (the parts read here).
type tablXML struct {
	DD02V struct {
		Tabname  string `xml:"TABNAME"`
		DDText   string `xml:"DDTEXT"`
		Contflag string `xml:"CONTFLAG"`
		TabClass string `xml:"TABCLASS"`
	} `xml:"values>DD02V"`
	Fields []struct {
		Fieldname  string `xml:"FIELDNAME"`
		Keyflag    string `xml:"KEYFLAG"`
		Rollname   string `xml:"ROLLNAME"`
		Datatype   string `xml:"DATATYPE"`
		Inttype    string `xml:"INTTYPE"`
		Leng       string `xml:"LENG"`
		Decimals   string `xml:"DECIMALS"`
		DDText     string `xml:"DDTEXT"`
		Checktable string `xml:"CHECKTABLE"`
	} `xml:"values>DD03P_TABLE>DD03P"`
}

func parseTabl(text, systemType string) (*table, *object, error) {
	var x struct {
		Values tablXML `xml:"abap"`
	}
	if err := xml.Unmarshal([]byte(text), &x); err != nil {
		return nil, nil, fmt.Errorf("not an abapGit table: %w", err)
	}
	tx := x.Values
	name := strings.ToUpper(tx.DD02V.Tabname)
	if name == "" || len(tx.Fields) == 0 {
		return nil, nil, fmt.Errorf("the table has no name or no fields")
	}
	spec := tableSpec{name: name, text: tx.DD02V.DDText, delivery: tx.DD02V.Contflag}
	t := buildTable(spec, systemType, true)
	for _, fx := range tx.Fields {
		length, _ := strconv.Atoi(strings.TrimLeft(fx.Leng, "0"))
		dec, _ := strconv.Atoi(strings.TrimLeft(fx.Decimals, "0"))
		typ := strings.ToUpper(fx.Datatype)
		if typ == "" {
			typ = "CHAR"
		}
		dtel := strings.ToUpper(fx.Rollname)
		if de, ok := dataElements[dtel]; ok && length == 0 {
			length, typ, dec = de.length, de.typ, de.decimals
		}
		fieldName := strings.ToUpper(fx.Fieldname)
		if strings.HasPrefix(fieldName, ".") { // .INCLUDE / .APPEND lines
			continue
		}
		field := sapField(fieldName, fx.Keyflag == "X", dtel, typ, length, dec, fx.DDText, strings.ToUpper(fx.Checktable))
		t.fieldIdx[field.Name] = len(t.schema.Fields)
		t.schema.Fields = append(t.schema.Fields, field)
		if field.Key && typ != "CLNT" {
			t.keys = append(t.keys, field.Name)
		}
	}
	o := &object{Type: "TABL", Name: name, Description: tx.DD02V.DDText, CreatedBy: "ABAPGIT", ChangedAt: "2026-01-01"}
	return t, o, nil
}

func sapField(name string, key bool, dtel, typ string, length, dec int, text, check string) sap.Field {
	return sap.Field{Name: name, Key: key, DataElement: dtel, Domain: dtel, Type: typ, Length: length, Decimals: dec, Description: text, CheckTable: check}
}

func sapFunctionInterface(o *object) sap.FunctionInterface {
	return sap.FunctionInterface{Function: o.Name, Group: o.Group, Description: o.Description, RemoteEnabled: true, Parameters: o.Params}
}
