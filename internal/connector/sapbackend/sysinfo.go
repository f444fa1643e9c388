package sapbackend

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/sapagent/sapagent/internal/connector"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/soaprfc"
)

// SystemInfo asks RFC_SYSTEM_INFO (SID, hosts, database, basis release, code page) and reads the
// installed components from CVERS: S4CORE makes the system S/4HANA, SAP_APPL without it ECC.
// A system with neither (e.g. a bare NetWeaver), or a user not allowed to read CVERS, gets an
// empty system_type and no components. change_seq is the newest seq of the connector's change
// log after a poll (changes.go; not repeated within 30 s); 0 when the log cannot be used.
// A full sync's probe (req.FullSync) clears the index phases' source cache; any other caller
// (a health check, a connection test) leaves it to the sync that filled it.
func (b *Backend) SystemInfo(ctx context.Context, cred connector.Credentials, req sap.SystemInfoRequest) (*sap.SystemInfo, error) {
	c, err := b.soap(sap.EndpointSystemInfo)
	if err != nil {
		return nil, err
	}
	if req.FullSync {
		b.sources.clear() // a full sync reads no source cached before it began (sources.go)
	}
	res, err := c.Call(ctx, rfcCred(cred), "RFC_SYSTEM_INFO", soaprfc.Params{})
	if err != nil {
		return nil, protoErr(err)
	}
	si := res.Struct("RFCSI_EXPORT")
	out := &sap.SystemInfo{
		SystemID: strings.TrimSpace(si["RFCSYSID"]), BasisRel: strings.TrimSpace(si["RFCSAPRL"]),
		Client: b.sys.Client, Host: strings.TrimSpace(si["RFCDBHOST"]), Database: strings.TrimSpace(si["RFCDBSYS"]),
		// SAP's Unicode code pages are 4102 and 4103 (UTF-16 big and little endian).
		Unicode:    strings.HasPrefix(strings.TrimSpace(si["RFCCHARTYP"]), "410"),
		Components: []sap.Component{},
	}
	_, err = c.ReadTable(ctx, rfcCred(cred), soaprfc.ReadTableRequest{Table: "CVERS", Fields: []string{"COMPONENT", "RELEASE", "EXTRELEASE"}},
		func(r soaprfc.Struct) error {
			out.Components = append(out.Components, sap.Component{Name: r["COMPONENT"], Release: r["RELEASE"], SP: r["EXTRELEASE"]})
			return nil
		})
	var se *sap.Error
	switch perr := protoErr(err); {
	case err == nil:
	case errors.As(perr, &se) && se.Code == sap.ErrAuthorization:
		// The SID and release still answer the connection test; the type stays unknown.
		out.Components = []sap.Component{}
	default:
		return nil, perr
	}
	for _, comp := range out.Components {
		switch comp.Name {
		case "S4CORE":
			out.SystemType, out.Release = "S4HANA", "S/4HANA (S4CORE "+comp.Release+")"
		case "SAP_APPL":
			if out.SystemType == "" {
				out.SystemType, out.Release = "ECC", "SAP ERP (SAP_APPL "+comp.Release+")"
			}
		}
	}
	if out.Release == "" {
		out.Release = "SAP_BASIS " + out.BasisRel
	}
	b.typeMu.Lock()
	b.systemType = out.SystemType
	b.typeMu.Unlock()
	b.pollMu.Lock()
	recent := time.Since(b.lastPoll) < systemInfoPollInterval
	b.pollMu.Unlock()
	if recent && b.changesErr == nil {
		out.ChangeSeq = b.changes.Latest()
	} else if seq, err := b.pollChanges(ctx, c, cred); err == nil {
		out.ChangeSeq = seq
	} else if ctx.Err() != nil {
		return nil, err
	}
	return out, nil
}
