package abapref

import (
	"encoding/xml"
	"strings"
)

// fugrInterfaces is the part of abapGit's function group XML (.fugr.xml) that
// types the function modules' parameters.
type fugrInterfaces struct {
	Functions []struct {
		Name       string      `xml:"FUNCNAME"`
		Import     []fugrParam `xml:"IMPORT>RSIMP"`
		Export     []fugrParam `xml:"EXPORT>RSEXP"`
		Changing   []fugrParam `xml:"CHANGING>RSCHA"`
		Tables     []fugrParam `xml:"TABLES>RSTBL"`
		Exceptions []string    `xml:"EXCEPTION>RSEXC>EXCEPTION"`
		ExcClasses string      `xml:"EXCEPTION_CLASSES"`
	} `xml:"abap>values>FUNCTIONS>item"`
}

type fugrParam struct {
	Typ      string `xml:"TYP"`       // TYPE t (TYPE REF TO t with REF_CLASS)
	RefClass string `xml:"REF_CLASS"` // X: TYP is a class or interface
	DBField  string `xml:"DBFIELD"`   // LIKE table-field
	DBStruct string `xml:"DBSTRUCT"`  // TABLES … STRUCTURE s / LIKE s
}

// FunctionInterfaces reads a function group's abapGit XML and returns, per
// function module (upper-case name), the objects its interface names: the
// data elements, structures, table types and tables typing its parameters,
// the classes of TYPE REF TO parameters and of class-based exceptions. The
// XML is where SAP keeps the interface; the source's `*"` comment block may
// leave parameters out. Line is 0: the references have no source line.
func FunctionInterfaces(fugrXML string) (map[string][]Ref, error) {
	var x fugrInterfaces
	if err := xml.Unmarshal([]byte(fugrXML), &x); err != nil {
		return nil, err
	}
	out := map[string][]Ref{}
	for _, f := range x.Functions {
		name := strings.ToUpper(strings.TrimSpace(f.Name))
		if name == "" {
			continue
		}
		var c collector
		for _, set := range [][]fugrParam{f.Import, f.Export, f.Changing, f.Tables} {
			for _, p := range set {
				paramRef(&c, p)
			}
		}
		if f.ExcClasses == "X" {
			for _, e := range f.Exceptions {
				if e = strings.ToUpper(strings.TrimSpace(e)); e != "" {
					c.add(TypeUse, classType(e), e, 0)
				}
			}
		}
		out[name] = append(out[name], c.refs...)
	}
	return out, nil
}

// paramRef records the type of one interface parameter; built-in and generic
// types (c, string, any, standard table, …) name no object.
func paramRef(c *collector, p fugrParam) {
	if t := strings.ToUpper(strings.TrimSpace(p.Typ)); t != "" {
		switch {
		case p.RefClass == "X":
			if !builtin[t] {
				c.add(TypeUse, classType(t), t, 0)
			}
		case strings.Contains(t, "=>"): // TYPE zcl_x=>ty_t: a type of a class
			cls, _, _ := strings.Cut(t, "=>")
			c.add(TypeUse, classType(cls), cls, 0)
		case !builtin[t] && !builtin[strings.Fields(t)[0]]:
			c.add(TypeUse, "TYPE", paramBase(t), 0)
		}
	}
	for _, t := range []string{p.DBField, p.DBStruct} {
		if t = strings.ToUpper(strings.TrimSpace(t)); t != "" && !builtin[t] {
			c.add(TypeUse, "TYPE", paramBase(t), 0)
		}
	}
}

// paramBase is the object of a parameter type: VBAK-VBELN -> VBAK, and the
// system fields SY-LANGU -> structure SYST.
func paramBase(t string) string {
	if b := base(t); b != "SY" {
		return b
	}
	return "SYST"
}
