package adt

import (
	"context"
	"encoding/xml"
	"net/http"
	"sort"
	"strings"
)

const (
	discoveryPath   = "/sap/bc/adt/discovery"
	acceptDiscovery = "application/atomsvc+xml"
)

// Feature is an ADT service the connector routes by; its value is the collection href the
// discovery document lists when the system has it.
type Feature string

const (
	FeatureQuickSearch     Feature = "/sap/bc/adt/repository/informationsystem/search"
	FeatureUsageReferences Feature = "/sap/bc/adt/repository/informationsystem/usageReferences"
	FeatureFreestyle       Feature = "/sap/bc/adt/datapreview/freestyle"
	FeatureDDICTables      Feature = "/sap/bc/adt/ddic/tables"
	FeatureDDICStructures  Feature = "/sap/bc/adt/ddic/structures"
	FeatureDDLSources      Feature = "/sap/bc/adt/ddic/ddl/sources"
	FeatureClasses         Feature = "/sap/bc/adt/oo/classes"
	FeatureInterfaces      Feature = "/sap/bc/adt/oo/interfaces"
	FeaturePrograms        Feature = "/sap/bc/adt/programs/programs"
	FeatureIncludes        Feature = "/sap/bc/adt/programs/includes"
	FeatureFunctionGroups  Feature = "/sap/bc/adt/functions/groups"
	FeatureNodeStructure   Feature = "/sap/bc/adt/repository/nodestructure"
	FeatureATCRuns         Feature = "/sap/bc/adt/atc/runs"
	FeatureCTSRequests     Feature = "/sap/bc/adt/cts/transportrequests"
	FeatureSystemInfo      Feature = "/sap/bc/adt/system/information"
)

// RoutingFeatures are the features the connector picks routes by; Features reports them.
var RoutingFeatures = []Feature{FeatureQuickSearch, FeatureUsageReferences, FeatureFreestyle, FeatureDDICTables,
	FeatureDDICStructures, FeatureDDLSources, FeatureClasses, FeatureInterfaces, FeaturePrograms, FeatureIncludes,
	FeatureFunctionGroups, FeatureNodeStructure, FeatureATCRuns, FeatureCTSRequests, FeatureSystemInfo}

// Features tells for each routing feature whether the system has it (for connector-health).
func (c *Capabilities) Features() map[Feature]bool {
	out := make(map[Feature]bool, len(RoutingFeatures))
	for _, f := range RoutingFeatures {
		out[f] = c.Has(f)
	}
	return out
}

// Collection is one app:collection of the discovery document.
type Collection struct {
	Workspace string
	Title     string
	Href      string
	Terms     []Category
}

// Category is an atom:category of a collection.
type Category struct {
	Term   string
	Scheme string
}

// Capabilities is what one system's discovery document offers.
type Capabilities struct {
	Collections []Collection
	hrefs       map[string]bool
}

// Has tells whether the system serves the feature.
func (c *Capabilities) Has(f Feature) bool { return c != nil && c.hrefs[strings.ToLower(string(f))] }

// HasHref tells whether any collection has exactly this href.
func (c *Capabilities) HasHref(href string) bool {
	return c != nil && c.hrefs[strings.ToLower(href)]
}

// Hrefs lists the distinct collection hrefs, sorted.
func (c *Capabilities) Hrefs() []string {
	out := make([]string, 0, len(c.hrefs))
	for h := range c.hrefs {
		out = append(out, h)
	}
	sort.Strings(out)
	return out
}

type atomService struct {
	XMLName    xml.Name `xml:"http://www.w3.org/2007/app service"`
	Workspaces []struct {
		Title       string `xml:"http://www.w3.org/2005/Atom title"`
		Collections []struct {
			Href       string `xml:"href,attr"`
			Title      string `xml:"http://www.w3.org/2005/Atom title"`
			Categories []struct {
				Term   string `xml:"term,attr"`
				Scheme string `xml:"scheme,attr"`
			} `xml:"http://www.w3.org/2005/Atom category"`
		} `xml:"http://www.w3.org/2007/app collection"`
	} `xml:"http://www.w3.org/2007/app workspace"`
}

// ParseDiscovery reads GET /sap/bc/adt/discovery (an Atom service document).
func ParseDiscovery(body []byte) (*Capabilities, error) {
	var doc atomService
	if err := xml.Unmarshal(body, &doc); err != nil {
		return nil, &Error{Kind: ErrMalformed, Path: discoveryPath, Message: "discovery: " + err.Error()}
	}
	caps := &Capabilities{hrefs: map[string]bool{}}
	for _, ws := range doc.Workspaces {
		for _, col := range ws.Collections {
			c := Collection{Workspace: ws.Title, Title: col.Title, Href: col.Href}
			for _, cat := range col.Categories {
				c.Terms = append(c.Terms, Category{Term: cat.Term, Scheme: cat.Scheme})
			}
			caps.Collections = append(caps.Collections, c)
			if col.Href != "" {
				caps.hrefs[strings.ToLower(col.Href)] = true
			}
		}
	}
	if len(caps.Collections) == 0 {
		return nil, &Error{Kind: ErrMalformed, Path: discoveryPath, Message: "discovery lists no collections"}
	}
	return caps, nil
}

// Capabilities reads the system's discovery document once and caches it for every user.
// A system that answers 404 has no ADT (service /sap/bc/adt inactive): ErrNotSupported.
func (c *Client) Capabilities(ctx context.Context, creds Credentials) (*Capabilities, error) {
	c.capsMu.Lock()
	caps := c.caps
	c.capsMu.Unlock()
	if caps != nil {
		return caps, nil
	}
	body, err := c.do(ctx, creds, request{method: http.MethodGet, path: discoveryPath, accept: acceptDiscovery})
	if err != nil {
		if e, ok := err.(*Error); ok && e.Kind == ErrNotFound {
			e.Kind, e.Message = ErrNotSupported, "ADT is not active on this system (GET /sap/bc/adt/discovery answered 404)"
		}
		return nil, err
	}
	caps, err = ParseDiscovery(body)
	if err != nil {
		return nil, err
	}
	c.capsMu.Lock()
	c.caps = caps
	c.capsMu.Unlock()
	return caps, nil
}

// ForgetCapabilities drops the cached discovery, e.g. after the system was upgraded; the next
// call reads it again.
func (c *Client) ForgetCapabilities() {
	c.capsMu.Lock()
	c.caps = nil
	c.capsMu.Unlock()
}

// rememberDiscovery caches a discovery body read while fetching a CSRF token.
func (c *Client) rememberDiscovery(body []byte) {
	caps, err := ParseDiscovery(body)
	if err != nil {
		return
	}
	c.capsMu.Lock()
	if c.caps == nil {
		c.caps = caps
	}
	c.capsMu.Unlock()
}

// require answers ErrNotSupported when the system lacks f.
func (c *Client) require(ctx context.Context, creds Credentials, f Feature, what string) error {
	caps, err := c.Capabilities(ctx, creds)
	if err != nil {
		return err
	}
	if !caps.Has(f) {
		return &Error{Kind: ErrNotSupported, Path: string(f), Message: what + " needs ADT service " + string(f) + ", which this system's discovery does not list (SAP_BASIS older than 7.50?)"}
	}
	return nil
}
