package sapsim

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/sapagent/sapagent/internal/sap"
)

// maxBody bounds a request body.
const maxBody = 8 << 20

// Handler serves the connector protocol: POST /<SID>/<endpoint>.
func (l *Landscape) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sid, endpoint, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		sys, ok := l.System(sid)
		if !ok || endpoint == "" {
			writeError(w, errorf(http.StatusNotFound, sap.ErrNotFound, "", "no system %q here; systems are %s", sid, strings.Join(l.SystemIDs(), ", ")))
			return
		}
		if adt, ok := strings.CutPrefix(r.URL.EscapedPath(), "/"+sid); ok && strings.HasPrefix(adt, adtPrefix+"/") {
			sys.serveADT(w, r, adt) // SAP's ADT REST interface (adt.go)
			return
		}
		if rest, ok := strings.CutPrefix(endpoint, ODataPrefix); ok { // SAP Gateway OData v2 (odata.go)
			sys.serveOData(w, r, rest)
			return
		}
		if endpoint == SOAPRFCPath { // SAP's SOAP RFC service (soaprfc.go)
			sys.serveSOAPRFC(w, r)
			return
		}
		if r.Method != http.MethodPost {
			writeError(w, errorf(http.StatusMethodNotAllowed, sap.ErrBadRequest, "", "use POST"))
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil || len(body) > maxBody {
			writeError(w, errorf(http.StatusBadRequest, sap.ErrBadRequest, "", "the request body is unreadable or larger than 8 MiB"))
			return
		}
		out, err := sys.Call(r.Context(), endpoint, Credentials{
			ConnectorKey: r.Header.Get(sap.HeaderConnectorKey), User: r.Header.Get(sap.HeaderSAPUser), Password: r.Header.Get(sap.HeaderSAPPassword),
			IdempotencyKey: r.Header.Get(sap.HeaderIdempotencyKey),
		}, body)
		if err != nil {
			writeError(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"data": out})
	})
}

func writeError(w http.ResponseWriter, err error) {
	var se *sap.Error
	if !errors.As(err, &se) {
		se = errorf(http.StatusInternalServerError, sap.ErrSAPException, "", "%v", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(se.Status)
	_ = json.NewEncoder(w).Encode(sap.ErrorBody{Error: se.ErrorDetail})
}
