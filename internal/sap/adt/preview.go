package adt

import (
	"context"
	"encoding/xml"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

const acceptPreview = "application/xml, application/vnd.sap.adt.datapreview.table.v1+xml"

// Column is one column of a data preview.
type Column struct {
	Name        string
	Type        string // ABAP internal type letter: C, N, D, T, X, P, I, 8, …
	Description string
	Key         bool
}

// Table is a data preview answer; rows hold SAP's text values as sent.
type Table struct {
	Columns []Column
	Rows    [][]string
	// TotalRows is SAP's count of all matching rows; NetWeaver 7.40 sends none (HasTotal false).
	TotalRows     int
	HasTotal      bool
	ExecutedQuery string
}

// ParsePreview reads a dataPreview:tableData answer (column-wise) into rows.
func ParsePreview(body []byte) (*Table, error) {
	var doc struct {
		XMLName  xml.Name `xml:"http://www.sap.com/adt/dataPreview tableData"`
		Total    *string  `xml:"http://www.sap.com/adt/dataPreview totalRows"`
		Executed string   `xml:"http://www.sap.com/adt/dataPreview executedQueryString"`
		Columns  []struct {
			Meta struct {
				Name        string `xml:"http://www.sap.com/adt/dataPreview name,attr"`
				Type        string `xml:"http://www.sap.com/adt/dataPreview type,attr"`
				Description string `xml:"http://www.sap.com/adt/dataPreview description,attr"`
				Key         string `xml:"http://www.sap.com/adt/dataPreview keyAttribute,attr"`
			} `xml:"http://www.sap.com/adt/dataPreview metadata"`
			Data []string `xml:"http://www.sap.com/adt/dataPreview dataSet>data"`
		} `xml:"http://www.sap.com/adt/dataPreview columns"`
	}
	bad := func(msg string) error {
		return &Error{Kind: ErrMalformed, Path: freestylePath, Message: "data preview: " + msg}
	}
	if err := xml.Unmarshal(body, &doc); err != nil {
		return nil, bad(err.Error())
	}
	t := &Table{ExecutedQuery: strings.TrimSpace(doc.Executed), Rows: [][]string{}}
	if doc.Total != nil {
		n, err := strconv.Atoi(strings.TrimSpace(*doc.Total))
		if err != nil || n < 0 {
			return nil, bad("totalRows is not a count")
		}
		t.TotalRows, t.HasTotal = n, true
	}
	rows := -1
	for _, col := range doc.Columns {
		t.Columns = append(t.Columns, Column{Name: col.Meta.Name, Type: col.Meta.Type, Description: col.Meta.Description, Key: col.Meta.Key == "true"})
		if rows >= 0 && len(col.Data) != rows {
			return nil, bad("columns have different row counts")
		}
		rows = len(col.Data)
	}
	for i := 0; i < rows; i++ {
		row := make([]string, len(doc.Columns))
		for j, col := range doc.Columns {
			row[j] = col.Data[i]
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

const freestylePath = "/sap/bc/adt/datapreview/freestyle"

// Preview runs an ABAP SQL SELECT through the free-style data preview, at most maxRows rows
// (0 means 100). Systems without the service (SAP_BASIS < 7.50) answer ErrNotSupported;
// the connector then reads through RFC_READ_TABLE.
func (c *Client) Preview(ctx context.Context, creds Credentials, sql string, maxRows int) (*Table, error) {
	if strings.TrimSpace(sql) == "" {
		return nil, &Error{Kind: ErrBadRequestInput, Message: "SQL text is empty"}
	}
	if err := c.require(ctx, creds, FeatureFreestyle, "data preview"); err != nil {
		return nil, err
	}
	if maxRows <= 0 {
		maxRows = 100
	}
	q := url.Values{"rowNumber": {strconv.Itoa(maxRows)}, "dataAging": {"true"}}
	body, err := c.do(ctx, creds, request{method: http.MethodPost, path: freestylePath, query: q,
		accept: acceptPreview, contentType: "text/plain", body: []byte(sql)})
	if err != nil {
		return nil, err
	}
	return ParsePreview(body)
}
