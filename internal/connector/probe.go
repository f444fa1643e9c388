package connector

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
)

// ProbePaths are the ICF services each interface answers at.
var ProbePaths = map[string]string{
	InterfaceADT:     "/sap/bc/adt/discovery",
	InterfaceSOAPRFC: "/sap/bc/soap/rfc",
	InterfaceOData:   "/sap/opu/odata/sap/API_BUSINESS_PARTNER/$metadata",
}

// A GET on the SOAP RFC service is not a call (SAP answers it with an error page), so the probe
// POSTs RFC_PING, which every ABAP system has and which needs only S_RFC for group SYST. OData
// is probed at the released API the connector writes through, not the bare /sap/opu/odata/
// node, which answers 404 on a healthy Gateway.
const rfcPingEnvelope = `<?xml version="1.0" encoding="utf-8"?>` +
	`<soap-env:Envelope xmlns:soap-env="http://schemas.xmlsoap.org/soap/envelope/">` +
	`<soap-env:Body><urn:RFC_PING xmlns:urn="urn:sap-com:document:sap:rfc:functions"/></soap-env:Body></soap-env:Envelope>`

// NewHTTPClient is a system's client to SAP: TLS 1.2+ trusting ca_file (plus the system's
// roots), the connect timeout, no redirects (an ICF logon page redirect is an answer, not a
// place to go). Proxies come from HTTPS_PROXY/NO_PROXY as SAP landscapes often need one.
func NewHTTPClient(sys System) *http.Client {
	connect := time.Duration(sys.Timeouts.Connect)
	if connect <= 0 {
		connect = DefaultConnectTimeout
	}
	transport := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: sys.CAPool},
		TLSHandshakeTimeout:   connect,
		MaxIdleConnsPerHost:   sys.MaxConcurrentCalls + 1,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
		ResponseHeaderTimeout: time.Duration(sys.Timeouts.Call),
	}
	return &http.Client{
		Transport:     transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// ProbeError is an interface that did not answer 2xx: its HTTP status (0: no answer at all).
type ProbeError struct {
	Status int
	Err    error
}

func (e *ProbeError) Error() string {
	if e.Status == 0 {
		return "no answer: " + e.Err.Error()
	}
	return fmt.Sprintf("HTTP %d %s", e.Status, http.StatusText(e.Status))
}

// HTTPProbe GETs each enabled interface's ICF path with the technical user and sap-client.
type HTTPProbe struct {
	System System
	Client *http.Client
}

// Probe returns one entry per enabled interface: nil when it answered 2xx.
func (p HTTPProbe) Probe(ctx context.Context) map[string]error {
	out := map[string]error{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, iface := range []string{InterfaceADT, InterfaceSOAPRFC, InterfaceOData} {
		if !p.System.Interfaces.Enabled(iface) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := p.ask(ctx, iface)
			mu.Lock()
			out[iface] = err
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

func (p HTTPProbe) ask(ctx context.Context, iface string) error {
	u := p.System.URL + ProbePaths[iface] + "?" + url.Values{"sap-client": {p.System.Client}, "sap-language": {p.System.Language}}.Encode()
	method, body := http.MethodGet, ""
	if iface == InterfaceSOAPRFC {
		method, body = http.MethodPost, rfcPingEnvelope
	}
	req, err := http.NewRequestWithContext(ctx, method, u, strings.NewReader(body))
	if err != nil {
		return &ProbeError{Err: err}
	}
	if iface == InterfaceSOAPRFC {
		req.Header.Set("Content-Type", "text/xml; charset=utf-8")
		req.Header.Set("SOAPAction", "urn:sap-com:document:sap:rfc:functions:RFC_PING")
	}
	if p.System.User != "" {
		req.SetBasicAuth(p.System.User, p.System.Password)
	}
	res, err := p.Client.Do(req)
	if err != nil {
		// url.Error carries the URL only, never the Authorization header.
		return &ProbeError{Err: err}
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20))
	if res.StatusCode/100 != 2 {
		return &ProbeError{Status: res.StatusCode}
	}
	return nil
}

// InterfaceHealth is one interface's probe result.
type InterfaceHealth struct {
	OK     bool   `json:"ok"`
	Status int    `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
}

// SystemHealth is one system's probe results: Reachable when any interface answered.
type SystemHealth struct {
	ID         string                     `json:"id"`
	URL        string                     `json:"url"`
	Reachable  bool                       `json:"reachable"`
	Interfaces map[string]InterfaceHealth `json:"interfaces"`
}

// CheckSystems probes every system in parallel, each bounded by its call timeout.
func CheckSystems(ctx context.Context, systems []System, backends map[string]Backend) []SystemHealth {
	out := make([]SystemHealth, len(systems))
	var wg sync.WaitGroup
	for i, sys := range systems {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pctx, cancel := context.WithTimeout(ctx, time.Duration(sys.Timeouts.Call))
			defer cancel()
			h := SystemHealth{ID: sys.ID, URL: sys.URL, Interfaces: map[string]InterfaceHealth{}}
			for iface, err := range backends[sys.ID].Probe(pctx) {
				ih := InterfaceHealth{OK: err == nil}
				if err != nil {
					ih.Error = redact(err.Error(), sys.Password)
					if pe, ok := err.(*ProbeError); ok {
						ih.Status = pe.Status
					}
				}
				// An answer of any status means SAP's ICF is there.
				if ih.OK || ih.Status != 0 {
					h.Reachable = true
				}
				h.Interfaces[iface] = ih
			}
			out[i] = h
		}()
	}
	wg.Wait()
	sort.SliceStable(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out
}
