package sapbackend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/sapagent/sapagent/internal/connector"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sap/soaprfc"
)

// SAP has no change sequence of its own, so the connector keeps one per system
// (connector.ChangeLog) and fills it by polling SAP's tables whenever probe_changes, system_info
// or a delta asks:
//
//   - E070/E071: transport requests (any status) dated in the window, each request once; its
//     object entries become changes, OBJFUNC 'D' a deletion. LIMU entries name their main object
//     (a function module's FUNC, a method's class).
//   - REPOSRC: active programs whose UDAT/UTIME is new in the window (an activation, with or
//     without a transport, $TMP included), named by their main object (class, function module,
//     function group, program).
//   - CDHDR/CDPOS: change documents of business data, as DATA changes of the first table CDPOS
//     names.
//
// The window is the last two days of SAP's dates (time zones and midnight are covered); what was
// seen in it is remembered with the log, so nothing is reported twice, also after a restart.
// The first poll only records what the window holds: the log starts empty (seq 0 is "before
// the log"), a full sync covers the past. Not seen: deletions of objects never transported
// ($TMP), changes to objects without a program (tables, CDS, enhancements) outside transports,
// data changes that write no change document.

// pollWindowDays is how many days back each poll looks.
const pollWindowDays = 2

// systemInfoPollInterval: system_info polls only when the last poll is older (probe_changes and
// index deltas always poll), so frequent connection checks do not read SAP's change tables.
const systemInfoPollInterval = 30 * time.Second

// maxDocsPerPoll bounds the change documents one poll turns into DATA changes (each needs a
// CDPOS read); the rest are picked up by the next poll.
const maxDocsPerPoll = 200

type pollState struct {
	Seen map[string]string `json:"seen"` // what the window held: key -> its SAP date
}

type found struct {
	change sap.Change
	key    string // what was seen
	date   string // its SAP date (DATS)
}

// pollChanges polls SAP once and appends what is new to the change log; it returns the
// newest seq. Polls of one system run one at a time.
func (b *Backend) pollChanges(ctx context.Context, c *soaprfc.Client, cred connector.Credentials) (int64, error) {
	if b.changesErr != nil {
		return 0, &sap.Error{Status: 503, ErrorDetail: sap.ErrorDetail{Code: sap.ErrSystemUnavailable,
			Message: fmt.Sprintf("the connector's change log of system %s cannot be used: %v", b.sys.ID, b.changesErr)}}
	}
	b.pollMu.Lock()
	defer b.pollMu.Unlock()
	b.lastPoll = time.Now()
	var st pollState
	first := true
	if raw := b.changes.State(); len(raw) > 0 && json.Unmarshal(raw, &st) == nil {
		first = false
	}
	if st.Seen == nil {
		st.Seen = map[string]string{}
	}
	since := time.Now().UTC().AddDate(0, 0, -pollWindowDays).Format("20060102")
	var news []found
	for _, src := range []func(context.Context, *soaprfc.Client, connector.Credentials, string, map[string]string) ([]found, error){
		b.pollTransports, b.pollSources, b.pollDocuments,
	} {
		f, err := src(ctx, c, cred, since, st.Seen)
		var se *sap.Error
		if errors.As(err, &se) && (se.Code == sap.ErrAuthorization || se.Code == sap.ErrNotFound) {
			continue // a table the user may not read: its kind of change is not seen
		}
		if err != nil {
			return 0, err
		}
		news = append(news, f...)
	}
	for k, d := range st.Seen {
		if d < since {
			delete(st.Seen, k)
		}
	}
	// One entry per object and poll: a transport's E071 entry and the activation's REPOSRC
	// stamp are the same change; a deletion wins.
	var changes []sap.Change
	at := map[string]int{}
	for _, f := range news {
		st.Seen[f.key] = f.date
		if first || f.change.ObjectName == "" {
			continue
		}
		k := f.change.ObjectType + "/" + f.change.ObjectName
		if i, ok := at[k]; ok {
			if f.change.ChangeType == "deleted" {
				changes[i] = f.change
			}
			continue
		}
		at[k] = len(changes)
		changes = append(changes, f.change)
	}
	sort.SliceStable(changes, func(i, j int) bool { return changes[i].ChangedAt < changes[j].ChangedAt })
	if len(news) == 0 && !first {
		return b.changes.Latest(), nil
	}
	b.sources.evict(changes)
	raw, _ := json.Marshal(st)
	if _, err := b.changes.Append(changes, raw); err != nil {
		return 0, &sap.Error{Status: 503, ErrorDetail: sap.ErrorDetail{Code: sap.ErrSystemUnavailable, Message: err.Error()}}
	}
	return b.changes.Latest(), nil
}

// stamp is SAP's date and time as RFC 3339 (SAP's own time zone is taken as UTC).
func stamp(date, clock string) string {
	t, err := time.Parse("20060102150405", strings.TrimSpace(date)+fmt.Sprintf("%06s", strings.TrimSpace(clock)))
	if err != nil {
		return ""
	}
	return t.Format(time.RFC3339)
}

func (b *Backend) pollTransports(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, since string, seen map[string]string) ([]found, error) {
	reqs, err := read(ctx, c, cred, "E070", []string{"TRKORR", "AS4USER", "AS4DATE", "AS4TIME"}, "AS4DATE >= "+soaprfc.QuoteLiteral(since), 0, 0)
	if err != nil {
		return nil, err
	}
	var out []found
	for _, r := range reqs {
		nr, date := trimmed(r, "TRKORR"), trimmed(r, "AS4DATE")
		key := "E070:" + nr
		if _, ok := seen[key]; ok {
			continue
		}
		out = append(out, found{key: key, date: date})
		objs, err := read(ctx, c, cred, "E071", []string{"PGMID", "OBJECT", "OBJ_NAME", "OBJFUNC"}, "TRKORR = "+soaprfc.QuoteLiteral(nr), 0, 0)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			typ, name, ok := transportObject(trimmed(o, "PGMID"), trimmed(o, "OBJECT"), trimmed(o, "OBJ_NAME"))
			if !ok {
				continue
			}
			kind := "modified"
			if trimmed(o, "OBJFUNC") == "D" {
				kind = "deleted"
			}
			out = append(out, found{key: key + ":" + typ + "/" + name, date: date,
				change: sap.Change{ObjectType: typ, ObjectName: name, ChangeType: kind, ChangedAt: stamp(date, r["AS4TIME"]), ChangedBy: trimmed(r, "AS4USER")}})
		}
	}
	return out, nil
}

// transportObject names the object of an E071 entry: R3TR entries are objects; LIMU entries
// are parts, named by their object (ok false: a part the protocol has no object for).
func transportObject(pgmid, typ, name string) (string, string, bool) {
	switch pgmid {
	case "R3TR":
		return typ, name, true
	case "LIMU":
		switch typ {
		case "FUNC":
			return "FUNC", name, true
		case "REPS", "REPT":
			return "PROG", name, true
		case "METH", "CLSD", "CPUB", "CPRO", "CPRI", "CINC":
			if len(name) > 30 {
				name = name[:30]
			}
			return "CLAS", strings.TrimSpace(name), true
		}
	}
	return "", "", false
}

func (b *Backend) pollSources(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, since string, seen map[string]string) ([]found, error) {
	rows, err := read(ctx, c, cred, "REPOSRC", []string{"PROGNAME", "CNAM", "CDAT", "UNAM", "UDAT", "UTIME"},
		"R3STATE = 'A' AND UDAT >= "+soaprfc.QuoteLiteral(since), 0, 0)
	if err != nil {
		return nil, err
	}
	var out []found
	for _, r := range rows {
		prog, date := trimmed(r, "PROGNAME"), trimmed(r, "UDAT")
		key := "REPOSRC:" + prog + "@" + date + trimmed(r, "UTIME")
		if _, ok := seen[key]; ok {
			continue
		}
		u, err := b.mainObject(ctx, c, cred, prog)
		if err != nil {
			return nil, err
		}
		kind := "modified"
		if trimmed(r, "CDAT") == date {
			kind = "created"
		}
		out = append(out, found{key: key, date: date,
			change: sap.Change{ObjectType: u.ObjectType, ObjectName: u.Name, ChangeType: kind, ChangedAt: stamp(date, r["UTIME"]), ChangedBy: trimmed(r, "UNAM")}})
	}
	return out, nil
}

func (b *Backend) pollDocuments(ctx context.Context, c *soaprfc.Client, cred connector.Credentials, since string, seen map[string]string) ([]found, error) {
	rows, err := read(ctx, c, cred, "CDHDR", []string{"OBJECTCLAS", "OBJECTID", "CHANGENR", "USERNAME", "UDATE", "UTIME"}, "UDATE >= "+soaprfc.QuoteLiteral(since), 0, 0)
	if err != nil {
		return nil, err
	}
	var out []found
	for _, r := range rows {
		key := "CDHDR:" + trimmed(r, "OBJECTCLAS") + "/" + trimmed(r, "OBJECTID") + "/" + trimmed(r, "CHANGENR")
		if _, ok := seen[key]; ok {
			continue
		}
		if len(out) == maxDocsPerPoll {
			break
		}
		table := trimmed(r, "OBJECTCLAS")
		pos, err := read(ctx, c, cred, "CDPOS", []string{"TABNAME"}, and("OBJECTCLAS = "+soaprfc.QuoteLiteral(table),
			"OBJECTID = "+soaprfc.QuoteLiteral(trimmed(r, "OBJECTID")), "CHANGENR = "+soaprfc.QuoteLiteral(trimmed(r, "CHANGENR"))), 0, 1)
		if err != nil {
			return nil, err
		}
		if len(pos) > 0 {
			table = trimmed(pos[0], "TABNAME")
		}
		out = append(out, found{key: key, date: trimmed(r, "UDATE"),
			change: sap.Change{ObjectType: "DATA", ObjectName: table, ChangeType: "modified", ChangedAt: stamp(r["UDATE"], r["UTIME"]), ChangedBy: trimmed(r, "USERNAME")}})
	}
	return out, nil
}

// ProbeChanges polls SAP, then answers from the connector's change log.
func (b *Backend) ProbeChanges(ctx context.Context, cred connector.Credentials, req sap.ProbeChangesRequest) (*sap.ProbeChangesResponse, error) {
	c, err := b.soap(sap.EndpointProbeChanges)
	if err != nil {
		return nil, err
	}
	if req.AfterSeq < 0 {
		return nil, badRequest("after_seq must not be negative")
	}
	latest, err := b.pollChanges(ctx, c, cred)
	if err != nil {
		return nil, err
	}
	limit := req.Limit
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	changes, more := b.changes.After(req.AfterSeq, limit)
	// The source cache's rule (sources.go): a probe from the start clears it, a delta's probe
	// evicts what it reports.
	if req.AfterSeq == 0 {
		b.sources.clear()
	} else {
		b.sources.evict(changes)
	}
	if changes == nil {
		changes = []sap.Change{}
	}
	return &sap.ProbeChangesResponse{LatestSeq: latest, Changes: changes, More: more}, nil
}
