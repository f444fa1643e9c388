package sapbackend

import (
	"context"
	"errors"
	"strings"

	"github.com/sapagent/sapagent/internal/connector"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/adt"
)

// adtTypes maps the protocol's object types onto ADT's quick-search type filter.
var adtTypes = map[string]string{
	"PROG": "PROG/P", "INCL": "PROG/I", "CLAS": "CLAS/OC", "INTF": "INTF/OI", "FUGR": "FUGR/F",
	"FUNC": "FUGR/FF", "TABL": "TABL/DT", "STRU": "TABL/DS", "DDLS": "DDLS/DF",
}

// protocolType is the protocol's type of an ADT type ("CLAS/OC" → CLAS, "FUGR/FF" → FUNC).
func protocolType(adtType string) string {
	t := strings.ToUpper(adtType)
	for p, a := range adtTypes {
		if a == t {
			return p
		}
	}
	main, _, _ := strings.Cut(t, "/")
	return main
}

// custom: the customer namespace (Z, Y) or a package of it ($TMP and other local packages too).
func custom(name, pkg string) bool {
	n, p := strings.ToUpper(name), strings.ToUpper(pkg)
	return strings.HasPrefix(n, "Z") || strings.HasPrefix(n, "Y") ||
		strings.HasPrefix(p, "Z") || strings.HasPrefix(p, "Y") || strings.HasPrefix(p, "$")
}

// SearchObjects runs ADT's quick search (names with * wildcards).
func (b *Backend) SearchObjects(ctx context.Context, cred connector.Credentials, req sap.SearchObjectsRequest) (*sap.SearchObjectsResponse, error) {
	c, err := b.adtClient(sap.EndpointSearchObjects)
	if err != nil {
		return nil, err
	}
	limit := req.Limit
	if limit <= 0 {
		limit = 50
	}
	opt := adt.SearchOptions{MaxResults: limit}
	if t := strings.ToUpper(strings.TrimSpace(req.ObjectType)); t != "" {
		a, ok := adtTypes[t]
		if !ok {
			return nil, connector.NotSupported("search_objects by object type %s is not mapped onto ADT's quick search", t)
		}
		opt.ObjectType = a
	}
	refs, err := c.Search(ctx, adtCred(cred), req.Query, opt)
	if err != nil {
		return nil, protoErr(err)
	}
	out := &sap.SearchObjectsResponse{Objects: []sap.ObjectRef{}}
	for _, r := range refs {
		o := sap.ObjectRef{Type: protocolType(r.Type), Name: r.Name, Description: r.Description, Package: r.Package, Custom: custom(r.Name, r.Package)}
		if req.CustomOnly && !o.Custom {
			continue
		}
		out.Objects = append(out.Objects, o)
	}
	return out, nil
}

// ABAPSource reads an object's active source through ADT.
func (b *Backend) ABAPSource(ctx context.Context, cred connector.Credentials, req sap.ABAPSourceRequest) (*sap.ABAPSource, error) {
	c, err := b.adtClient(sap.EndpointABAPSource)
	if err != nil {
		return nil, err
	}
	src, err := c.Source(ctx, adtCred(cred), req.ObjectType, req.Name)
	if err != nil {
		return nil, protoErr(err)
	}
	lines := strings.Count(src, "\n")
	if src != "" && !strings.HasSuffix(src, "\n") {
		lines++
	}
	return &sap.ABAPSource{ObjectType: strings.ToUpper(req.ObjectType), Name: strings.ToUpper(req.Name), Source: src, Lines: lines}, nil
}

// WhereUsed asks ADT's usage references. A system without them (SAP_BASIS below 7.50) is
// answered from the cross-reference tables WBCROSSGT and CROSS through RFC_READ_TABLE when
// SOAP RFC is on; otherwise NOT_SUPPORTED.
func (b *Backend) WhereUsed(ctx context.Context, cred connector.Credentials, req sap.WhereUsedRequest) (*sap.WhereUsedResponse, error) {
	c, err := b.adtClient(sap.EndpointWhereUsed)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.ObjectType) == "" {
		return nil, badRequest("where_used needs object_type (PROG, CLAS, INTF, FUNC, TABL, …) to find the object in ADT")
	}
	res, err := c.WhereUsed(ctx, adtCred(cred), req.ObjectType, req.Name)
	if errors.Is(err, adt.ErrNotSupported) {
		rfc := b.rfc
		if rfc == nil || b.rfcErr != nil {
			return nil, connector.NotSupported("where_used: system %s has no ADT usage references (SAP_BASIS below 7.50) "+
				"and the fallback over WBCROSSGT/CROSS needs SOAP RFC (interfaces.soap_rfc) (%s)", b.sys.ID, err.Error())
		}
		return b.crossWhereUsed(ctx, rfc, cred, strings.ToUpper(strings.TrimSpace(req.ObjectType)),
			strings.ToUpper(strings.TrimSpace(req.Name)), req.Limit)
	}
	if err != nil {
		return nil, protoErr(err)
	}
	out := &sap.WhereUsedResponse{Usages: []sap.Usage{}}
	for _, u := range res.Objects {
		if !u.IsResult || u.Name == "" {
			continue
		}
		out.Usages = append(out.Usages, sap.Usage{ObjectType: protocolType(u.Type), Name: u.Name})
		if req.Limit > 0 && len(out.Usages) >= req.Limit {
			break
		}
	}
	return out, nil
}
