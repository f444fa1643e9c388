package adt

import (
	"context"
	"encoding/xml"
	"net/http"
	"net/url"
)

const (
	usagePath          = "/sap/bc/adt/repository/informationsystem/usageReferences"
	usageNS            = "http://www.sap.com/adt/ris/usageReferences"
	ctUsageScopeReq    = "application/vnd.sap.adt.repository.usagereferences.scope.request.v1+xml"
	acceptUsageScope   = "application/vnd.sap.adt.repository.usagereferences.scope.response.v1+xml"
	ctUsageRequest     = "application/vnd.sap.adt.repository.usagereferences.request.v1+xml"
	acceptUsageResult  = "application/vnd.sap.adt.repository.usagereferences.result.v1+xml"
	usageScopeRequestX = `<?xml version="1.0" encoding="UTF-8"?>` +
		`<usagereferences:usageScopeRequest xmlns:usagereferences="` + usageNS + `">` +
		`<usagereferences:affectedObjects/></usagereferences:usageScopeRequest>`
)

// UsageScope is what the scope call answers: the object, the grade and the object types ADT
// will search, and an opaque payload the search call must send back.
type UsageScope struct {
	LocalUsage       string          `xml:"localUsage,attr"`
	ObjectIdentifier usageIdentifier `xml:"http://www.sap.com/adt/ris/usageReferences objectIdentifier"`
	Grade            usageGrade      `xml:"http://www.sap.com/adt/ris/usageReferences grade"`
	ObjectTypes      []usageType     `xml:"http://www.sap.com/adt/ris/usageReferences objectTypes>type"`
	Payload          string          `xml:"http://www.sap.com/adt/ris/usageReferences payload"`
}

type usageIdentifier struct {
	DisplayName string `xml:"displayName,attr"`
	GlobalType  string `xml:"globalType,attr"`
}

type usageGrade struct {
	Definitions        string `xml:"definitions,attr"`
	Elements           string `xml:"elements,attr"`
	IndirectReferences string `xml:"indirectReferences,attr"`
}

type usageType struct {
	Name       string `xml:"name,attr"`
	IsSelected string `xml:"isSelected,attr"`
	IsDefault  string `xml:"isDefault,attr"`
}

// ParseUsageScope reads a usageScopeResult.
func ParseUsageScope(body []byte) (*UsageScope, error) {
	var doc struct {
		XMLName xml.Name `xml:"http://www.sap.com/adt/ris/usageReferences usageScopeResult"`
		UsageScope
	}
	if err := xml.Unmarshal(body, &doc); err != nil {
		return nil, &Error{Kind: ErrMalformed, Path: usagePath + "/scope", Message: "usage scope: " + err.Error()}
	}
	return &doc.UsageScope, nil
}

// usageRequestBody is the search request: the scope as the scope call answered it.
func usageRequestBody(s *UsageScope) ([]byte, error) {
	type attr = xml.Attr
	p := func(local string) xml.Name { return xml.Name{Local: "usagereferences:" + local} }
	type typ struct {
		XMLName xml.Name
		Attrs   []attr `xml:",any,attr"`
	}
	types := make([]typ, 0, len(s.ObjectTypes))
	for _, t := range s.ObjectTypes {
		types = append(types, typ{XMLName: p("type"), Attrs: []attr{{Name: xml.Name{Local: "name"}, Value: t.Name},
			{Name: xml.Name{Local: "isSelected"}, Value: t.IsSelected}, {Name: xml.Name{Local: "isDefault"}, Value: t.IsDefault}}})
	}
	localUsage := s.LocalUsage
	if localUsage == "" {
		localUsage = "false"
	}
	doc := struct {
		XMLName  xml.Name
		NS       string `xml:"xmlns:usagereferences,attr"`
		Affected struct {
			XMLName xml.Name
		}
		Scope struct {
			XMLName    xml.Name
			LocalUsage string `xml:"localUsage,attr"`
			Ident      typ
			Grade      typ
			Types      struct {
				XMLName xml.Name
				Types   []typ
			}
			Payload struct {
				XMLName xml.Name
				Text    string `xml:",chardata"`
			}
		}
	}{XMLName: p("usageReferenceRequest"), NS: usageNS}
	doc.Affected.XMLName = p("affectedObjects")
	doc.Scope.XMLName = p("scope")
	doc.Scope.LocalUsage = localUsage
	doc.Scope.Ident = typ{XMLName: p("objectIdentifier"), Attrs: []attr{{Name: xml.Name{Local: "displayName"}, Value: s.ObjectIdentifier.DisplayName},
		{Name: xml.Name{Local: "globalType"}, Value: s.ObjectIdentifier.GlobalType}}}
	doc.Scope.Grade = typ{XMLName: p("grade"), Attrs: []attr{{Name: xml.Name{Local: "definitions"}, Value: s.Grade.Definitions},
		{Name: xml.Name{Local: "elements"}, Value: s.Grade.Elements}, {Name: xml.Name{Local: "indirectReferences"}, Value: s.Grade.IndirectReferences}}}
	doc.Scope.Types.XMLName = p("objectTypes")
	doc.Scope.Types.Types = types
	doc.Scope.Payload.XMLName = p("payload")
	doc.Scope.Payload.Text = s.Payload
	out, err := xml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), out...), nil
}

// Usage is one object that references the searched object.
type Usage struct {
	URI       string
	ParentURI string
	Type      string // ADT type, e.g. CLAS/OC; empty for a part of its parent (an include)
	Name      string
	Package   string
	IsResult  bool   // ADT's own flag: a hit rather than a grouping node
	Info      string // usageInformation, e.g. "gradeDirect,includeTest"
}

// UsageResult is a where-used answer.
type UsageResult struct {
	NumberOfResults int
	Description     string
	Objects         []Usage
}

// ParseUsageResult reads a usageReferenceResult.
func ParseUsageResult(body []byte) (*UsageResult, error) {
	var doc struct {
		XMLName     xml.Name `xml:"http://www.sap.com/adt/ris/usageReferences usageReferenceResult"`
		Number      int      `xml:"numberOfResults,attr"`
		Description string   `xml:"resultDescription,attr"`
		Objects     []struct {
			URI       string `xml:"uri,attr"`
			ParentURI string `xml:"parentUri,attr"`
			IsResult  bool   `xml:"isResult,attr"`
			Info      string `xml:"usageInformation,attr"`
			Obj       struct {
				Name    string `xml:"http://www.sap.com/adt/core name,attr"`
				Type    string `xml:"http://www.sap.com/adt/core type,attr"`
				Package struct {
					Name string `xml:"http://www.sap.com/adt/core name,attr"`
				} `xml:"http://www.sap.com/adt/core packageRef"`
			} `xml:"http://www.sap.com/adt/ris/usageReferences adtObject"`
		} `xml:"http://www.sap.com/adt/ris/usageReferences referencedObjects>referencedObject"`
	}
	if err := xml.Unmarshal(body, &doc); err != nil {
		return nil, &Error{Kind: ErrMalformed, Path: usagePath, Message: "usage references: " + err.Error()}
	}
	res := &UsageResult{NumberOfResults: doc.Number, Description: doc.Description, Objects: []Usage{}}
	for _, o := range doc.Objects {
		res.Objects = append(res.Objects, Usage{URI: o.URI, ParentURI: o.ParentURI, Type: o.Obj.Type, Name: o.Obj.Name,
			Package: o.Obj.Package.Name, IsResult: o.IsResult, Info: o.Info})
	}
	return res, nil
}

// WhereUsed lists the objects that reference an object: first the scope call (which object
// types ADT will search), then the search with that scope. A system without the usage
// references service (SAP_BASIS < 7.50) answers ErrNotSupported before any call.
func (c *Client) WhereUsed(ctx context.Context, creds Credentials, objType, name string) (*UsageResult, error) {
	if err := c.require(ctx, creds, FeatureUsageReferences, "where-used"); err != nil {
		return nil, err
	}
	uri, err := c.ObjectURI(ctx, creds, objType, name)
	if err != nil {
		return nil, err
	}
	return c.WhereUsedURI(ctx, creds, uri)
}

// WhereUsedURI is WhereUsed for an ADT object URI.
func (c *Client) WhereUsedURI(ctx context.Context, creds Credentials, uri string) (*UsageResult, error) {
	if err := c.require(ctx, creds, FeatureUsageReferences, "where-used"); err != nil {
		return nil, err
	}
	q := url.Values{"uri": {uri}}
	body, err := c.do(ctx, creds, request{method: http.MethodPost, path: usagePath + "/scope", query: q,
		accept: acceptUsageScope, contentType: ctUsageScopeReq, body: []byte(usageScopeRequestX)})
	if err != nil {
		return nil, err
	}
	scope, err := ParseUsageScope(body)
	if err != nil {
		return nil, err
	}
	req, err := usageRequestBody(scope)
	if err != nil {
		return nil, &Error{Kind: ErrMalformed, Path: usagePath, Message: "usage request: " + err.Error()}
	}
	body, err = c.do(ctx, creds, request{method: http.MethodPost, path: usagePath, query: q,
		accept: acceptUsageResult, contentType: ctUsageRequest, body: req})
	if err != nil {
		return nil, err
	}
	return ParseUsageResult(body)
}
