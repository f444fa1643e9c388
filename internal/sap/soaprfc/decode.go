package soaprfc

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
)

var errNoEnvelope = errors.New("no SOAP envelope with a function response or fault")

// decodeEnvelope stream-parses a SOAP RFC answer: the <FM.Response> element's children become
// exports and tables; rows of tables in stream go to their RowFunc instead of the Result.
// A SOAP Fault becomes an *Error mapped from the ABAP exception it names. RawToken (no
// namespace bookkeeping) saves a fifth of the allocations per row; names are matched on their
// local part and nesting by depth, so nothing depends on the prefixes.
func decodeEnvelope(r io.Reader, fm string, stream map[string]RowFunc) (*Result, error) {
	res, err := decodeEnvelopeTokens(xml.NewDecoder(r), fm, stream)
	if err == io.EOF {
		return nil, io.ErrUnexpectedEOF // an answer that ends inside the envelope
	}
	return res, err
}

func decodeEnvelopeTokens(d *xml.Decoder, fm string, stream map[string]RowFunc) (*Result, error) {
	sawEnvelope := false
	for {
		tok, err := d.RawToken()
		if err == io.EOF && !sawEnvelope {
			return nil, errNoEnvelope
		}
		if err != nil {
			return nil, err
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch {
		case se.Name.Local == "Envelope":
			sawEnvelope = true
		case !sawEnvelope:
			return nil, errNoEnvelope
		case se.Name.Local == "Header" || se.Name.Local == "Body":
		case se.Name.Local == "Fault":
			return nil, decodeFault(d, fm)
		case strings.HasSuffix(se.Name.Local, ".Response"):
			return decodeResponse(d, stream)
		default:
			if err := d.Skip(); err != nil {
				return nil, err
			}
		}
	}
}

func decodeResponse(d *xml.Decoder, stream map[string]RowFunc) (*Result, error) {
	res := &Result{Exports: map[string]any{}, Tables: map[string][]Struct{}}
	for {
		tok, err := d.RawToken()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := abapNameOf(t.Name.Local)
			if err := decodeParam(d, name, res, stream[name]); err != nil {
				return nil, err
			}
		case xml.EndElement:
			return res, nil
		}
	}
}

// decodeParam reads one parameter: text only → scalar; <item> children → table; other
// children → structure. An empty element is an empty scalar (Table() of it is nil).
func decodeParam(d *xml.Decoder, name string, res *Result, onRow RowFunc) error {
	var text strings.Builder
	var st Struct
	isTable := false
	var rows []Struct
	for {
		tok, err := d.RawToken()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.CharData:
			text.Write(t)
		case xml.StartElement:
			if t.Name.Local == "item" {
				isTable = true
				row, err := decodeStruct(d)
				if err != nil {
					return err
				}
				if onRow != nil {
					if err := onRow(name, row); err != nil {
						return err
					}
				} else {
					rows = append(rows, row)
				}
				continue
			}
			v, err := innerText(d)
			if err != nil {
				return err
			}
			if st == nil {
				st = Struct{}
			}
			st[abapNameOf(t.Name.Local)] = v
		case xml.EndElement:
			switch {
			case isTable:
				res.Tables[name] = rows
			case st != nil:
				res.Exports[name] = st
			default:
				res.Exports[name] = text.String()
			}
			return nil
		}
	}
}

func decodeStruct(d *xml.Decoder) (Struct, error) {
	s := Struct{}
	for {
		tok, err := d.RawToken()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			v, err := innerText(d)
			if err != nil {
				return nil, err
			}
			s[abapNameOf(t.Name.Local)] = v
		case xml.EndElement:
			return s, nil
		}
	}
}

// innerText returns the text of the current element (nested elements' text concatenated:
// deep structures are flattened, which no endpoint of the connector needs).
func innerText(d *xml.Decoder) (string, error) {
	var b strings.Builder
	depth := 1
	for {
		tok, err := d.RawToken()
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.CharData:
			b.Write(t)
		case xml.StartElement:
			depth++
		case xml.EndElement:
			depth--
			if depth == 0 {
				return b.String(), nil
			}
		}
	}
}

// decodeFault reads <soap-env:Fault>: faultstring and the detail's <FM.Exception><Name>.
func decodeFault(d *xml.Decoder, fm string) error {
	var faultString, exc, text string
	depth := 1
	var path []string
	for depth > 0 {
		tok, err := d.RawToken()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			path = append(path, t.Name.Local)
		case xml.EndElement:
			depth--
			if len(path) > 0 {
				path = path[:len(path)-1]
			}
		case xml.CharData:
			if len(path) == 0 {
				continue
			}
			v := strings.TrimSpace(string(t))
			switch last := path[len(path)-1]; {
			case last == "faultstring":
				faultString += v
			case last == "Name" && len(path) >= 2 && strings.HasSuffix(path[len(path)-2], ".Exception"):
				exc += v
			case last == "Text" && len(path) >= 2 && strings.HasSuffix(path[len(path)-2], ".Exception"):
				text += v
			}
		}
	}
	if exc == "" {
		// Older releases name the exception only in faultstring.
		exc = faultString
	}
	if text == "" && faultString != exc {
		text = faultString
	}
	if exc == "" {
		return exceptionError(fm, "SYSTEM_FAILURE", "SOAP fault without exception name")
	}
	return exceptionError(fm, exc, text)
}
