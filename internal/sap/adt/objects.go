package adt

import (
	"context"
	"encoding/xml"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

const (
	searchPath = "/sap/bc/adt/repository/informationsystem/search"
	acceptXML  = "application/xml"
	acceptText = "text/plain"
)

// ObjectRef is a repository object as ADT names it.
type ObjectRef struct {
	URI         string // /sap/bc/adt/...
	Type        string // ADT type, e.g. PROG/P, CLAS/OC, FUGR/FF, TABL/DT
	Name        string
	Package     string
	Description string
}

type objectReferences struct {
	XMLName xml.Name `xml:"http://www.sap.com/adt/core objectReferences"`
	Refs    []struct {
		URI         string `xml:"http://www.sap.com/adt/core uri,attr"`
		Type        string `xml:"http://www.sap.com/adt/core type,attr"`
		Name        string `xml:"http://www.sap.com/adt/core name,attr"`
		Package     string `xml:"http://www.sap.com/adt/core packageName,attr"`
		Description string `xml:"http://www.sap.com/adt/core description,attr"`
	} `xml:"http://www.sap.com/adt/core objectReference"`
}

// ParseSearch reads a quick search answer (adtcore:objectReferences).
func ParseSearch(body []byte) ([]ObjectRef, error) {
	var doc objectReferences
	if err := xml.Unmarshal(body, &doc); err != nil {
		return nil, &Error{Kind: ErrMalformed, Path: searchPath, Message: "search: " + err.Error()}
	}
	out := make([]ObjectRef, 0, len(doc.Refs))
	for _, r := range doc.Refs {
		out = append(out, ObjectRef{URI: r.URI, Type: r.Type, Name: r.Name, Package: r.Package, Description: r.Description})
	}
	return out, nil
}

// SearchOptions narrow a quick search.
type SearchOptions struct {
	ObjectType string // ADT type filter, e.g. "PROG/P" or "FUGR/FF"; empty: all
	MaxResults int    // 0 means 50
}

// Search runs the repository quick search (names with * wildcards).
func (c *Client) Search(ctx context.Context, creds Credentials, query string, opt SearchOptions) ([]ObjectRef, error) {
	if strings.TrimSpace(query) == "" {
		return nil, &Error{Kind: ErrBadRequestInput, Message: "search query is empty"}
	}
	if err := c.require(ctx, creds, FeatureQuickSearch, "object search"); err != nil {
		return nil, err
	}
	if opt.MaxResults <= 0 {
		opt.MaxResults = 50
	}
	q := url.Values{"operation": {"quickSearch"}, "query": {query}, "maxResults": {strconv.Itoa(opt.MaxResults)}}
	if opt.ObjectType != "" {
		q.Set("objectType", opt.ObjectType)
	}
	body, err := c.do(ctx, creds, request{method: http.MethodGet, path: searchPath, query: q, accept: acceptXML})
	if err != nil {
		return nil, err
	}
	return ParseSearch(body)
}

// escName is an object name as ADT URIs spell it: lower case, namespaces' slashes escaped.
func escName(name string) string { return url.PathEscape(strings.ToLower(strings.TrimSpace(name))) }

// sourceRoute is the collection (and so the discovery feature) ADT keeps one object type in.
type sourceRoute struct {
	collection Feature
}

var sourceRoutes = map[string]sourceRoute{
	"PROG": {FeaturePrograms},
	"INCL": {FeatureIncludes},
	"CLAS": {FeatureClasses},
	"INTF": {FeatureInterfaces},
	"TABL": {FeatureDDICTables},
	"STRU": {FeatureDDICStructures},
	"DDLS": {FeatureDDLSources},
}

// ObjectURI is the ADT URI of an object of an R3TR/LIMU type (PROG, INCL, CLAS, INTF, FUNC,
// TABL, STRU, DDLS). A function module's URI names its group, so FUNC asks the quick search.
func (c *Client) ObjectURI(ctx context.Context, creds Credentials, objType, name string) (string, error) {
	objType = strings.ToUpper(strings.TrimSpace(objType))
	if strings.TrimSpace(name) == "" {
		return "", &Error{Kind: ErrBadRequestInput, Message: "object name is empty"}
	}
	if objType == "FUNC" {
		refs, err := c.Search(ctx, creds, strings.ToUpper(name), SearchOptions{ObjectType: "FUGR/FF", MaxResults: 10})
		if err != nil {
			return "", err
		}
		for _, r := range refs {
			if strings.EqualFold(r.Name, name) && strings.HasPrefix(strings.ToUpper(r.Type), "FUGR/FF") {
				return r.URI, nil
			}
		}
		return "", &Error{Kind: ErrNotFound, Message: "function module " + strings.ToUpper(name) + " not found"}
	}
	route, ok := sourceRoutes[objType]
	if !ok {
		return "", &Error{Kind: ErrNotSupported, Message: "ADT source of object type " + objType + " is not supported"}
	}
	if err := c.require(ctx, creds, route.collection, objType+" "+strings.ToUpper(name)); err != nil {
		return "", err
	}
	return string(route.collection) + "/" + escName(name), nil
}

// Source is an object's active source (GET <uri>/source/main as text/plain).
func (c *Client) Source(ctx context.Context, creds Credentials, objType, name string) (string, error) {
	uri, err := c.ObjectURI(ctx, creds, objType, name)
	if err != nil {
		return "", err
	}
	return c.sourceAt(ctx, creds, uri)
}

// FunctionModuleSource is a function module's active source when its group is known (TFDIR):
// one request, where Source first asks the quick search for the group.
func (c *Client) FunctionModuleSource(ctx context.Context, creds Credentials, group, name string) (string, error) {
	if strings.TrimSpace(group) == "" || strings.TrimSpace(name) == "" {
		return "", &Error{Kind: ErrBadRequestInput, Message: "function group and module name are needed"}
	}
	if err := c.require(ctx, creds, FeatureFunctionGroups, "FUNC "+strings.ToUpper(name)); err != nil {
		return "", err
	}
	return c.sourceAt(ctx, creds, string(FeatureFunctionGroups)+"/"+escName(group)+"/fmodules/"+escName(name))
}

func (c *Client) sourceAt(ctx context.Context, creds Credentials, uri string) (string, error) {
	body, err := c.do(ctx, creds, request{method: http.MethodGet, path: uri + "/source/main", accept: acceptText, text: true})
	if err != nil {
		return "", err
	}
	return string(body), nil
}
