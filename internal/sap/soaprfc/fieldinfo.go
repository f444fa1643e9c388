package soaprfc

import (
	"context"
	"strconv"
	"strings"

	"github.com/sapagent/sapagent/internal/sap"
)

// FieldInfo is one field of a DDIC table as DDIF_FIELDINFO_GET describes it (DFIES).
type FieldInfo struct {
	Name         string
	Position     int
	Key          bool
	DataElement  string // ROLLNAME
	Domain       string // DOMNAME
	Type         string // DATATYPE: CHAR, NUMC, DATS, CURR …
	InternalType string // INTTYPE: C, N, D, P …
	Length       int    // LENG (characters)
	OutputLength int    // OUTPUTLEN
	Decimals     int
	ConvExit     string // CONVEXIT, e.g. ALPHA
	CheckTable   string
	Text         string // FIELDTEXT in the logon language
	LongLabel    string // SCRTEXT_L
}

// FieldInfo reads table's fields in language lang (the logon language when empty). An unknown
// table is NOT_FOUND; DDIF_FIELDINFO_GET raises NOT_FOUND for it.
func (c *Client) FieldInfo(ctx context.Context, cred Credentials, table, lang string) ([]FieldInfo, error) {
	if lang == "" {
		lang = c.cfg.Language
	}
	imp := map[string]any{"TABNAME": strings.ToUpper(table)}
	if lang != "" {
		imp["LANGU"] = sapLanguage(lang)
	}
	res, err := c.Call(ctx, cred, "DDIF_FIELDINFO_GET", Params{
		Imports: imp,
		Tables:  map[string][]Struct{"DFIES_TAB": nil},
	})
	if err != nil {
		return nil, err
	}
	var out []FieldInfo
	for _, r := range res.Table("DFIES_TAB") {
		name := strings.TrimSpace(r["FIELDNAME"])
		if name == "" || strings.HasPrefix(name, ".") { // .INCLUDE / .APPEND markers
			continue
		}
		out = append(out, FieldInfo{
			Name:         name,
			Position:     atoi(r["POSITION"]),
			Key:          strings.TrimSpace(r["KEYFLAG"]) == "X",
			DataElement:  strings.TrimSpace(r["ROLLNAME"]),
			Domain:       strings.TrimSpace(r["DOMNAME"]),
			Type:         strings.TrimSpace(r["DATATYPE"]),
			InternalType: strings.TrimSpace(r["INTTYPE"]),
			Length:       atoi(r["LENG"]),
			OutputLength: atoi(r["OUTPUTLEN"]),
			Decimals:     atoi(r["DECIMALS"]),
			ConvExit:     strings.TrimSpace(r["CONVEXIT"]),
			CheckTable:   strings.TrimSpace(r["CHECKTABLE"]),
			Text:         strings.TrimSpace(r["FIELDTEXT"]),
			LongLabel:    strings.TrimSpace(r["SCRTEXT_L"]),
		})
	}
	return out, nil
}

// SchemaFields converts DDIF_FIELDINFO_GET fields to the connector protocol's table_schema fields.
func SchemaFields(fs []FieldInfo) []sap.Field {
	out := make([]sap.Field, 0, len(fs))
	for _, f := range fs {
		desc := f.Text
		if desc == "" {
			desc = f.LongLabel
		}
		out = append(out, sap.Field{
			Name: f.Name, Key: f.Key, DataElement: f.DataElement, Domain: f.Domain, Type: f.Type,
			Length: f.Length, Decimals: f.Decimals, Description: desc, CheckTable: f.CheckTable,
			Appended: strings.HasPrefix(f.Name, "ZZ") || strings.HasPrefix(f.Name, "YY"),
		})
	}
	return out
}

// sapLanguage turns an ISO code into SAP's one-character key where SAP's differs (LANGU is
// CHAR 1 in DDIF_FIELDINFO_GET); one-character input is passed as is.
func sapLanguage(l string) string {
	l = strings.ToUpper(strings.TrimSpace(l))
	if len(l) <= 1 {
		return l
	}
	if k, ok := isoToSAP[l]; ok {
		return k
	}
	return l[:1]
}

var isoToSAP = map[string]string{
	"EN": "E", "DE": "D", "FR": "F", "ES": "S", "IT": "I", "JA": "J", "NL": "N", "PT": "P",
	"ZH": "1", "RU": "R", "PL": "L", "CS": "C", "SV": "V", "DA": "K", "FI": "U", "NO": "O",
	"TR": "T", "KO": "3", "HU": "H", "EL": "G", "AR": "A", "HE": "B", "SK": "Q", "SL": "5",
}

func atoi(s string) int {
	n, _ := strconv.Atoi(strings.TrimSpace(s))
	return n
}
